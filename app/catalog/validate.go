package catalog

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/switchboardhq/switchboard/app/config"
	"github.com/switchboardhq/switchboard/app/redact"
)

// nameRE is server.json's pattern for a server name: reverse-DNS, one slash.
var nameRE = regexp.MustCompile(`^[a-zA-Z0-9.-]+/[a-zA-Z0-9._-]+$`)

// ValidName reports whether name is a valid registry server name: 3 to 200
// characters matching ^[a-zA-Z0-9.-]+/[a-zA-Z0-9._-]+$ (server.json).
func ValidName(name string) bool {
	return len(name) >= 3 && len(name) <= 200 && nameRE.MatchString(name)
}

// maxShortNameLen is config's: a short name becomes a config server name,
// so it must pass config's validation.
const maxShortNameLen = config.MaxServerNameLen

// validShortName reports whether s can be a server name in config.json.
func validShortName(s string) bool { return config.ValidServerName(s) }

// SuggestShortName derives a config server name from a registry name:
// the part after the slash without the usual "mcp"/"server" decoration,
// lowercased ("io.github.brave/brave-search-mcp-server" → "brave-search").
// The result is always a valid config server name ("server" when nothing
// usable is left).
func SuggestShortName(name string) string {
	_, s, found := strings.Cut(name, "/")
	if !found {
		s = name
	}
	s = strings.ToLower(s)
	for _, p := range []string{"mcp-server-", "server-mcp-", "mcp-", "server-", "mcp_server_", "mcp_"} {
		if rest, ok := strings.CutPrefix(s, p); ok && rest != "" {
			s = rest
			break
		}
	}
	for _, p := range []string{"-mcp-server", "-server-mcp", "-mcp", "-server", "_mcp_server", "_mcp"} {
		if rest, ok := strings.CutSuffix(s, p); ok && rest != "" {
			s = rest
			break
		}
	}
	var b strings.Builder
	for i := 0; i < len(s) && b.Len() < maxShortNameLen; i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', '0' <= c && c <= '9':
			b.WriteByte(c)
		case c == '-' || c == '.' || c == '_':
			if b.Len() > 0 {
				b.WriteByte('-')
			}
		}
	}
	out := strings.Trim(b.String(), "-")
	for strings.Contains(out, "--") {
		out = strings.ReplaceAll(out, "--", "-")
	}
	if !validShortName(out) {
		return "server"
	}
	return out
}

// LooksSecret reports whether an input name (an environment variable or a
// flag) suggests that its value is a credential, such as GITHUB_TOKEN or
// --api-key: the rule of app/redact. Names that mention a secret without
// holding one (a key file's path, an auth server's URL) are exceptions.
func LooksSecret(name string) bool {
	n := strings.ToUpper(strings.TrimLeft(name, "-"))
	switch strings.ReplaceAll(n, "-", "_") {
	case "KEY_FILE", "AUTH_URL", "AUTH_SERVER_URL":
		return false
	}
	return redact.SecretName(n)
}

// inputFormats are the formats an Input may have; "" means "string".
var inputFormats = []string{"", "string", "number", "boolean", "filepath", "directory"}

// Validate checks an entry as strictly as the embedded catalog requires:
// a valid name and short name, a description, an exact version, at least
// one package Switchboard can run, exact package versions, inputs that are
// typed, described when required, marked secret when their name says
// credential, and defaults that fit their type. It returns every problem
// found, joined, each naming the entry and the field.
func (e Entry) Validate() error {
	var errs []error
	bad := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("entry %q: "+format, append([]any{e.Name}, args...)...))
	}
	if !ValidName(e.Name) {
		bad("name must match %s and be 3 to 200 characters", nameRE)
	}
	if e.ShortName != "" && !validShortName(e.ShortName) {
		bad("shortName %q is not a valid server name (letters, digits, '_', '.', '-', at most %d, no \"__\")", e.ShortName, maxShortNameLen)
	}
	if strings.TrimSpace(e.Description) == "" {
		bad("description is empty")
	} else if len(e.Description) > 100 {
		bad("description is %d characters; server.json allows 100", len(e.Description))
	}
	if !IsExactVersion(e.Version) {
		bad("version %q is not an exact version", e.Version)
	}
	if _, err := e.RunnablePackage(); err != nil {
		bad("%v", err)
	}
	for i, p := range e.Packages {
		where := fmt.Sprintf("packages[%d] (%s %s)", i, p.RegistryType, p.Identifier)
		if v := p.ExactVersion(); v == "" {
			bad("%s: no exact version", where)
		}
		for j, a := range p.RuntimeArguments {
			checkArgument(bad, fmt.Sprintf("%s runtimeArguments[%d]", where, j), a)
		}
		for j, a := range p.PackageArguments {
			checkArgument(bad, fmt.Sprintf("%s packageArguments[%d]", where, j), a)
		}
		for j, kv := range p.EnvironmentVars {
			field := fmt.Sprintf("%s environmentVariables[%d] %s", where, j, kv.Name)
			if kv.Name == "" {
				bad("%s: no name", field)
			}
			checkInput(bad, field, kv.Name, kv.Input)
		}
	}
	return errors.Join(errs...)
}

func checkArgument(bad func(string, ...any), field string, a Argument) {
	switch a.Type {
	case "positional":
		if a.ValueHint == "" && a.Value == "" {
			bad("%s: a positional argument needs a valueHint or a value", field)
		}
		if a.Format == "boolean" {
			bad("%s: a positional argument cannot be a boolean flag", field)
		}
		checkInput(bad, field, a.ValueHint, a.Input)
	case "named":
		if !strings.HasPrefix(a.Name, "-") {
			bad("%s: named argument %q does not start with '-'", field, a.Name)
		}
		checkInput(bad, field+" "+a.Name, a.Name, a.Input)
	default:
		bad("%s: type %q is neither positional nor named", field, a.Type)
	}
}

func checkInput(bad func(string, ...any), field, name string, in Input) {
	if !slices.Contains(inputFormats, in.Format) {
		bad("%s: format %q is not one of string, number, boolean, filepath, directory", field, in.Format)
	}
	if in.Value != "" {
		return // fixed: the user is never asked
	}
	if strings.TrimSpace(in.Description) == "" {
		bad("%s: no description; the user is asked for it", field)
	}
	if LooksSecret(name) && !in.IsSecret {
		bad("%s: looks like a credential but is not marked isSecret", field)
	}
	if in.IsSecret && in.Default != "" {
		bad("%s: a secret has a default value", field)
	}
	if in.DataPath != "" {
		switch {
		case in.Format != "filepath" && in.Format != "directory":
			bad("%s: dataPath on an input of format %q: it needs filepath or directory", field, in.Format)
		case in.IsSecret || in.Default != "":
			bad("%s: dataPath with a default or on a secret", field)
		case strings.ContainsAny(in.DataPath, "/\\") || in.DataPath == "." || in.DataPath == "..":
			bad("%s: dataPath %q is not the name of a file in the data folder", field, in.DataPath)
		}
	}
	if in.Default != "" {
		if err := in.Check(in.Default); err != nil {
			bad("%s: default: %v", field, err)
		}
	}
	for _, c := range in.Choices {
		if err := (Input{Format: in.Format}).Check(c); err != nil {
			bad("%s: choice: %v", field, err)
		}
	}
}

// Check reports whether value fits the input's format and choices. It does
// not look at the file system: whether a path exists is for the installer
// to check on the machine that runs the server.
func (in Input) Check(value string) error {
	switch in.Format {
	case "number":
		if _, err := strconv.ParseFloat(value, 64); err != nil {
			return fmt.Errorf("%q is not a number", value)
		}
	case "boolean":
		if value != "true" && value != "false" {
			return fmt.Errorf("%q is not true or false", value)
		}
	case "filepath", "directory":
		if strings.TrimSpace(value) == "" {
			return errors.New("the path is empty")
		}
	}
	if len(in.Choices) > 0 && !slices.Contains(in.Choices, value) {
		return fmt.Errorf("%q is not one of %s", value, strings.Join(in.Choices, ", "))
	}
	return nil
}
