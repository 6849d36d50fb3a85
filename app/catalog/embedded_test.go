package catalog

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

// TestEmbedded checks every curated entry the way the installer and the UI
// rely on it, one rule at a time, so that a failure names the rule.
func TestEmbedded(t *testing.T) {
	entries, err := Embedded()
	if err != nil {
		t.Fatal(err)
	}
	var shorts []string
	for _, e := range entries {
		shorts = append(shorts, e.ShortName)
	}
	for _, want := range []string{
		"filesystem", "git", "fetch", "memory", "sequential-thinking", "everything", "time",
		"github", "playwright", "puppeteer", "postgres", "sqlite", "brave-search", "slack",
		"gitlab", "google-maps", "redis", "sentry", "notion", "context7",
	} {
		if !slices.Contains(shorts, want) {
			t.Errorf("the curated catalog lacks %s", want)
		}
	}

	for _, e := range entries {
		t.Run(e.ShortName, func(t *testing.T) {
			if !nameRE.MatchString(e.Name) || len(e.Name) > 200 {
				t.Errorf("name %q does not match the registry's pattern", e.Name)
			}
			if !validShortName(e.ShortName) {
				t.Errorf("shortName %q is not a valid config server name", e.ShortName)
			}
			if e.Source != SourceEmbedded || e.Status != StatusActive {
				t.Errorf("source %q status %q", e.Source, e.Status)
			}
			if e.Description == "" || len(e.Description) > 100 || e.Title == "" {
				t.Errorf("title %q, description of %d characters", e.Title, len(e.Description))
			}
			if e.Repository == nil || !strings.HasPrefix(e.Repository.URL, "https://github.com/") {
				t.Errorf("repository %+v", e.Repository)
			}
			if !IsExactVersion(e.Version) {
				t.Errorf("version %q is not exact", e.Version)
			}
			p, err := e.RunnablePackage()
			if err != nil {
				t.Fatalf("no runnable package: %v", err)
			}
			if p.Transport.Type != "stdio" {
				t.Errorf("transport %q", p.Transport.Type)
			}
			v := p.ExactVersion()
			if v == "" {
				t.Errorf("package %s pins no exact version", p.Identifier)
			}
			// The entry's version is the package's: the UI shows one.
			if strings.TrimPrefix(v, "v") != e.Version {
				t.Errorf("entry version %q, package version %q", e.Version, v)
			}
			if p.RegistryType == RegistryNPM && p.RuntimeHint != "npx" || p.RegistryType == RegistryPyPI && p.RuntimeHint != "uvx" {
				t.Errorf("runtimeHint %q for %s", p.RuntimeHint, p.RegistryType)
			}
			for _, in := range inputsOf(p) {
				if in.Value != "" {
					continue
				}
				if in.IsRequired && strings.TrimSpace(in.Description) == "" {
					t.Errorf("required input %s is not described", in.name)
				}
				if in.Description == "" {
					t.Errorf("input %s is not described", in.name)
				}
				if LooksSecret(in.name) && !in.IsSecret {
					t.Errorf("input %s looks secret but is not marked", in.name)
				}
				if !slices.Contains(inputFormats, in.Format) {
					t.Errorf("input %s has format %q", in.name, in.Format)
				}
				if in.Default != "" {
					if err := in.Check(in.Default); err != nil {
						t.Errorf("input %s default: %v", in.name, err)
					}
				}
			}
			if err := e.Validate(); err != nil {
				t.Errorf("Validate: %v", err)
			}
		})
	}
}

type namedInput struct {
	Input
	name string
}

func inputsOf(p Package) []namedInput {
	var out []namedInput
	for _, a := range append(slices.Clone(p.RuntimeArguments), p.PackageArguments...) {
		n := a.Name
		if n == "" {
			n = a.ValueHint
		}
		out = append(out, namedInput{a.Input, n})
	}
	for _, kv := range p.EnvironmentVars {
		out = append(out, namedInput{kv.Input, kv.Name})
	}
	return out
}

// TestEmbeddedSecrets pins the inputs that must be secrets, so that a
// careless edit of embedded.json cannot put an API key into config.json.
func TestEmbeddedSecrets(t *testing.T) {
	entries, err := Embedded()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{
		"github":       {"GITHUB_PERSONAL_ACCESS_TOKEN"},
		"brave-search": {"BRAVE_API_KEY"},
		"slack":        {"SLACK_BOT_TOKEN"},
		"gitlab":       {"GITLAB_PERSONAL_ACCESS_TOKEN"},
		"google-maps":  {"GOOGLE_MAPS_API_KEY"},
		"sentry":       {"SENTRY_ACCESS_TOKEN", "OPENAI_API_KEY"},
		"notion":       {"NOTION_TOKEN"},
		"context7":     {"CONTEXT7_API_KEY"},
		"postgres":     {"database_url"},
		"redis":        {"redis_url"},
	}
	for _, e := range entries {
		p, _ := e.RunnablePackage()
		var got []string
		for _, in := range inputsOf(p) {
			if in.IsSecret {
				got = append(got, in.name)
			}
		}
		if !slices.Equal(got, want[e.ShortName]) {
			t.Errorf("%s: secrets %v, want %v", e.ShortName, got, want[e.ShortName])
		}
	}
}

func TestEmbeddedCopies(t *testing.T) {
	a, _ := Embedded()
	a[0].Packages[0].Identifier = "changed"
	b, _ := Embedded()
	if b[0].Packages[0].Identifier == "changed" {
		t.Error("Embedded returned shared entries")
	}
}

// TestValidateCatches feeds Validate broken entries, so that TestEmbedded
// passing means something.
func TestValidateCatches(t *testing.T) {
	good := func() Entry {
		return Entry{
			Name: "io.example/good", Description: "A server", Version: "1.0.0", ShortName: "good",
			Packages: []Package{{
				RegistryType: RegistryNPM, Identifier: "@example/good", Version: "1.0.0",
				Transport: Transport{Type: "stdio"},
				EnvironmentVars: []KeyValue{{Name: "EXAMPLE_TOKEN", Input: Input{
					Description: "The token", IsRequired: true, IsSecret: true,
				}}},
				PackageArguments: []Argument{{Type: "named", Name: "--port", Input: Input{
					Description: "Port", Format: "number", Default: "8080",
				}}},
			}},
		}
	}
	if err := good().Validate(); err != nil {
		t.Fatalf("the good entry fails: %v", err)
	}
	tests := []struct {
		name   string
		change func(*Entry)
		want   string
	}{
		{"bad name", func(e *Entry) { e.Name = "no slash" }, "name must match"},
		{"two slashes", func(e *Entry) { e.Name = "a/b/c" }, "name must match"},
		{"bad short name", func(e *Entry) { e.ShortName = "a__b" }, "shortName"},
		{"no description", func(e *Entry) { e.Description = "" }, "description is empty"},
		{"long description", func(e *Entry) { e.Description = strings.Repeat("x", 101) }, "allows 100"},
		{"version latest", func(e *Entry) { e.Version = "latest" }, "not an exact version"},
		{"package range", func(e *Entry) { e.Packages[0].Version = "^1.0.0" }, "no exact version"},
		{"nuget only", func(e *Entry) { e.Packages[0].RegistryType = RegistryNuGet }, "nuget is not supported"},
		{"undescribed required", func(e *Entry) { e.Packages[0].EnvironmentVars[0].Description = "" }, "no description"},
		{"secret unmarked", func(e *Entry) { e.Packages[0].EnvironmentVars[0].IsSecret = false }, "not marked isSecret"},
		{"secret default", func(e *Entry) { e.Packages[0].EnvironmentVars[0].Default = "abc" }, "a secret has a default"},
		{"bad format", func(e *Entry) { e.Packages[0].PackageArguments[0].Format = "url" }, `format "url"`},
		{"bad number default", func(e *Entry) { e.Packages[0].PackageArguments[0].Default = "eighty" }, "not a number"},
		{"named without dash", func(e *Entry) { e.Packages[0].PackageArguments[0].Name = "port" }, "does not start with '-'"},
		{"positional without hint", func(e *Entry) {
			e.Packages[0].PackageArguments[0] = Argument{Type: "positional", Input: Input{Description: "x"}}
		}, "valueHint"},
		{"bad choice default", func(e *Entry) {
			e.Packages[0].PackageArguments[0].Input = Input{Description: "x", Choices: []string{"a", "b"}, Default: "c"}
		}, "not one of a, b"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := good()
			tt.change(&e)
			err := e.Validate()
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want one containing %q", err, tt.want)
			}
		})
	}
}

func TestParseEmbeddedRejects(t *testing.T) {
	tests := []struct{ name, doc, want string }{
		{"unknown field", `{"servers":[{"name":"io.x/y","descripton":"typo"}]}`, "unknown field"},
		{"duplicate", dup(), "listed twice"},
		{"no short name", `{"servers":[` + goodJSON("") + `]}`, "no shortName"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := parseEmbedded([]byte(tt.doc))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want %q", err, tt.want)
			}
		})
	}
}

func goodJSON(short string) string {
	e := Entry{Name: "io.example/x", Description: "d", Version: "1.0.0", ShortName: short,
		Packages: []Package{{RegistryType: RegistryNPM, Identifier: "x", Version: "1.0.0", Transport: Transport{Type: "stdio"}}}}
	b, _ := json.Marshal(e)
	return string(b)
}

func dup() string { return `{"servers":[` + goodJSON("x") + `,` + goodJSON("x") + `]}` }
