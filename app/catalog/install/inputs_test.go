package install

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/switchboardhq/switchboard/app/catalog"
	"github.com/switchboardhq/switchboard/app/secrets"
)

func TestInputValidation(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "f.txt")
	if err := os.WriteFile(file, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	env := func(in catalog.Input) catalog.Package {
		return catalog.Package{EnvironmentVars: []catalog.KeyValue{{Name: "V", Input: in}}}
	}
	tests := []struct {
		name    string
		pkg     catalog.Package
		values  map[string]string
		wantEnv string // value of V, "" when absent
		wantErr string // substring; "" for success
	}{
		{"required present", env(catalog.Input{IsRequired: true}), map[string]string{"V": "x"}, "x", ""},
		{"required missing", env(catalog.Input{IsRequired: true, Description: "the API key"}), nil, "", "input V: required, but no value was given (the API key)"},
		{"required empty", env(catalog.Input{IsRequired: true}), map[string]string{"V": ""}, "", "input V: required"},
		{"required from default", env(catalog.Input{IsRequired: true, Default: "d"}), nil, "d", ""},
		{"optional absent", env(catalog.Input{}), nil, "", ""},
		{"number ok", env(catalog.Input{Format: "number"}), map[string]string{"V": " 8080 "}, "8080", ""},
		{"number float", env(catalog.Input{Format: "number"}), map[string]string{"V": "-1.5e3"}, "-1.5e3", ""},
		{"number bad", env(catalog.Input{Format: "number"}), map[string]string{"V": "80a"}, "", `input V: "80a" is not a number`},
		{"number inf", env(catalog.Input{Format: "number"}), map[string]string{"V": "Inf"}, "", "not a number"},
		{"boolean ok", env(catalog.Input{Format: "boolean"}), map[string]string{"V": "TRUE"}, "true", ""},
		{"boolean bad", env(catalog.Input{Format: "boolean"}), map[string]string{"V": "yes"}, "", `"yes" is not a boolean`},
		{"filepath ok", env(catalog.Input{Format: "filepath"}), map[string]string{"V": file}, file, ""},
		// A file the server creates: its folder is enough.
		{"filepath not yet created", env(catalog.Input{Format: "filepath"}), map[string]string{"V": file + ".new"}, file + ".new", ""},
		{"filepath in a missing folder", env(catalog.Input{Format: "filepath"}), map[string]string{"V": filepath.Join(dir, "no", "f")}, "",
			"does not exist, and neither does its folder"},
		{"directory missing", env(catalog.Input{Format: "directory"}), map[string]string{"V": filepath.Join(dir, "no")}, "", "does not exist"},
		{"data path default", env(catalog.Input{Format: "filepath", DataPath: "graph.jsonl"}), nil, filepath.Join(dir, "graph.jsonl"), ""},
		{"data path given", env(catalog.Input{Format: "filepath", DataPath: "graph.jsonl"}), map[string]string{"V": file}, file, ""},
		{"filepath relative", env(catalog.Input{Format: "filepath"}), map[string]string{"V": "f.txt"}, "", "not an absolute path"},
		{"directory ok", env(catalog.Input{Format: "directory"}), map[string]string{"V": dir}, dir, ""},
		{"directory is a file", env(catalog.Input{Format: "directory"}), map[string]string{"V": file}, "", "is not a directory"},
		{"choice ok", env(catalog.Input{Choices: []string{"a", "b"}}), map[string]string{"V": "b"}, "b", ""},
		{"choice bad", env(catalog.Input{Choices: []string{"a", "b"}}), map[string]string{"V": "c"}, "", `"c" is not one of a, b`},
		{"fixed value wins", env(catalog.Input{Value: "fixed"}), nil, "fixed", ""},
		{"NUL byte", env(catalog.Input{}), map[string]string{"V": "a\x00b"}, "", "NUL"},
		{"unknown format", env(catalog.Input{Format: "color"}), map[string]string{"V": "red"}, "", `unknown format "color"`},
		{"bad env name", catalog.Package{EnvironmentVars: []catalog.KeyValue{{Name: "A=B"}}}, nil, "", "invalid environment variable name"},
		{"positional number", catalog.Package{PackageArguments: []catalog.Argument{{Type: "positional", ValueHint: "port", Input: catalog.Input{Format: "number"}}}},
			map[string]string{"port": "x"}, "", `input port: "x" is not a number`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := buildPlan(tt.pkg, tt.values, dir)
			if tt.wantErr != "" {
				var ie *InputError
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !errors.As(err, &ie) {
					t.Fatalf("err = %v, want an *InputError containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := p.Env["V"]; got != tt.wantEnv {
				t.Errorf("V = %q, want %q", got, tt.wantEnv)
			}
		})
	}
}

func TestUnknownInput(t *testing.T) {
	pkg := catalog.Package{EnvironmentVars: []catalog.KeyValue{{Name: "TOKEN"}}}
	values := map[string]string{"TOKEN": "x", "TOKNE": "typo"}
	p, err := buildPlan(pkg, values, "")
	if err != nil {
		t.Fatal(err)
	}
	err = p.checkUnused(values, inputNames(pkg))
	if err == nil || !strings.Contains(err.Error(), "input TOKNE: unknown input: this package takes TOKEN") {
		t.Errorf("err = %v", err)
	}
}

func TestArgv(t *testing.T) {
	pos := func(hint string, in catalog.Input) catalog.Argument {
		return catalog.Argument{Type: "positional", ValueHint: hint, Input: in}
	}
	named := func(name string, in catalog.Input, repeated bool) catalog.Argument {
		return catalog.Argument{Type: "named", Name: name, Input: in, IsRepeated: repeated}
	}
	tests := []struct {
		name    string
		args    []catalog.Argument
		values  map[string]string
		want    []string
		secrets map[string]string
		wantErr string
	}{
		{"positional", []catalog.Argument{pos("dir", catalog.Input{}), pos("extra", catalog.Input{})},
			map[string]string{"dir": "/a b", "extra": "x"}, []string{"/a b", "x"}, nil, ""},
		{"positional fixed", []catalog.Argument{pos("", catalog.Input{Value: "stdio"})}, nil, []string{"stdio"}, nil, ""},
		{"optional positional skipped", []catalog.Argument{pos("dir", catalog.Input{})}, nil, nil, nil, ""},
		{"named", []catalog.Argument{named("--port", catalog.Input{}, false)}, map[string]string{"--port": "80"}, []string{"--port", "80"}, nil, ""},
		{"named by bare name", []catalog.Argument{named("--port", catalog.Input{}, false)}, map[string]string{"port": "80"}, []string{"--port", "80"}, nil, ""},
		{"named fixed", []catalog.Argument{named("--transport", catalog.Input{Value: "stdio"}, false)}, nil, []string{"--transport", "stdio"}, nil, ""},
		{"named boolean true", []catalog.Argument{named("--verbose", catalog.Input{Format: "boolean"}, false)}, map[string]string{"verbose": "true"}, []string{"--verbose"}, nil, ""},
		{"named boolean false", []catalog.Argument{named("--verbose", catalog.Input{Format: "boolean"}, false)}, map[string]string{"verbose": "false"}, nil, nil, ""},
		{"repeated named", []catalog.Argument{named("--allow", catalog.Input{}, true)}, map[string]string{"allow": "/a\n/b\n"},
			[]string{"--allow", "/a", "--allow", "/b"}, nil, ""},
		{"repeated positional", []catalog.Argument{{Type: "positional", ValueHint: "path", IsRepeated: true}}, map[string]string{"path": "/x\r\n/y"},
			[]string{"/x", "/y"}, nil, ""},
		{"injection stays one element", []catalog.Argument{pos("q", catalog.Input{}), named("--name", catalog.Input{}, false)},
			map[string]string{"q": "a; rm -rf / && echo $(id) `id` | cat > /tmp/x", "--name": "'\"; shutdown -h now; \""},
			[]string{"a; rm -rf / && echo $(id) `id` | cat > /tmp/x", "--name", "'\"; shutdown -h now; \""}, nil, ""},
		{"option smuggling refused", []catalog.Argument{pos("dir", catalog.Input{})}, map[string]string{"dir": "--inspect=0.0.0.0:9229"}, nil, nil,
			"would be read as an option"},
		{"negative number allowed", []catalog.Argument{pos("n", catalog.Input{Format: "number"})}, map[string]string{"n": "-3"}, []string{"-3"}, nil, ""},
		{"named that is not a flag", []catalog.Argument{{Type: "named", Name: "port"}}, nil, nil, nil, "is not a flag"},
		{"unknown type", []catalog.Argument{{Type: "weird", ValueHint: "w"}}, nil, nil, nil, `unknown argument type "weird"`},
		{"secret positional", []catalog.Argument{pos("conn", catalog.Input{IsSecret: true, IsRequired: true})},
			map[string]string{"conn": "postgres://u:pw@h/db"}, []string{secrets.Placeholder("arg:conn")},
			map[string]string{"arg:conn": "postgres://u:pw@h/db"}, ""},
		{"secret named", []catalog.Argument{named("--token", catalog.Input{IsSecret: true}, false)},
			map[string]string{"token": "t"}, []string{"--token", secrets.Placeholder("arg:token")}, map[string]string{"arg:token": "t"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := buildPlan(catalog.Package{PackageArguments: tt.args}, tt.values, "")
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, p.PackageArgs); diff != "" {
				t.Errorf("argv (-want +got):\n%s", diff)
			}
			if tt.secrets == nil {
				tt.secrets = map[string]string{}
			}
			if diff := cmp.Diff(tt.secrets, p.SecretArgs); diff != "" {
				t.Errorf("secret args (-want +got):\n%s", diff)
			}
		})
	}
}

func TestRuntimeArgv(t *testing.T) {
	p := newPlan()
	p.RuntimeArgs = []string{"--python", "3.12"}
	p.PackageArgs = []string{"--root", "/x"}
	p.Env = map[string]string{"B": "1", "A": "2"}
	p.SecretEnv = map[string]string{"TOKEN": "s"}
	got, err := pypiArgs("mcp-server-fetch", "2025.1.0", "https://pypi.example/simple", p)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"--python", "3.12", "--index-url", "https://pypi.example/simple", "--from", "mcp-server-fetch==2025.1.0", "mcp-server-fetch", "--root", "/x"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("uvx argv (-want +got):\n%s", diff)
	}
	for _, bad := range [][2]string{{"--from=evil", ""}, {"pkg", "1.0; rm"}, {"pkg", "-1"}} {
		if _, err := pypiArgs(bad[0], bad[1], "", p); err == nil {
			t.Errorf("pypiArgs(%q, %q) accepted", bad[0], bad[1])
		}
	}
	img, err := imageRef("mcp/github", "1.2")
	if err != nil || img != "mcp/github:1.2" {
		t.Errorf("imageRef = %q, %v", img, err)
	}
	if img, _ := imageRef("ghcr.io/a/b:3", "1.2"); img != "ghcr.io/a/b:3" {
		t.Errorf("imageRef kept tag: %q", img)
	}
	if _, err := imageRef("--privileged", ""); err == nil {
		t.Error("imageRef accepted an option")
	}
	wantOCI := []string{"run", "-i", "--rm", "--python", "3.12", "-e", "A", "-e", "B", "-e", "TOKEN", "mcp/github:1.2", "--root", "/x"}
	if diff := cmp.Diff(wantOCI, ociArgs("mcp/github:1.2", p)); diff != "" {
		t.Errorf("docker argv (-want +got):\n%s", diff)
	}
	for _, bad := range []string{"--registry=http://evil", "Bad Name", "a;b"} {
		if _, err := npmSpec(catalog.Package{Identifier: bad}); err == nil {
			t.Errorf("npmSpec accepted %q", bad)
		}
	}
	if s, err := npmSpec(catalog.Package{Identifier: "@scope/pkg", Version: "1.0.0"}); err != nil || s != "@scope/pkg@1.0.0" {
		t.Errorf("npmSpec = %q, %v", s, err)
	}
}

func TestPickBin(t *testing.T) {
	tests := []struct{ pkg, bin, want, wantErr string }{
		{"x", `"dist/index.js"`, "dist/index.js", ""},
		{"@modelcontextprotocol/server-everything", `{"mcp-server-everything":"dist/index.js"}`, "dist/index.js", ""},
		{"fx", `{"helper":"h.js","fx":"./bin/s.js"}`, "bin/s.js", ""},
		{"@s/foo", `{"a":"a.js","b":"b.js"}`, "", "several programs"},
		{"x", ``, "", "no \"bin\""},
		{"x", `"../../etc/passwd"`, "", "outside itself"},
	}
	for _, tt := range tests {
		got, err := pickBin(tt.pkg, []byte(tt.bin))
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("pickBin(%s, %s) err = %v, want %q", tt.pkg, tt.bin, err, tt.wantErr)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("pickBin(%s, %s) = %q, %v; want %q", tt.pkg, tt.bin, got, err, tt.want)
		}
	}
}
