package install

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/switchboardhq/switchboard/app/catalog"
	"github.com/switchboardhq/switchboard/app/secrets"
)

// An InputError says which input was wrong and why. Nothing has run when
// Install returns one.
type InputError struct {
	Input string // the env var name, argument valueHint/name, or user_config key
	Err   error
}

func (e *InputError) Error() string { return fmt.Sprintf("input %s: %v", e.Input, e.Err) }
func (e *InputError) Unwrap() error { return e.Err }

func inputErr(name, format string, args ...any) error {
	return &InputError{Input: name, Err: fmt.Errorf(format, args...)}
}

// resolveValue decides an input's value: a fixed value wins, then what the
// user gave, then the default. It checks the value against the input's
// format and choices. ok is false for an optional input left empty.
func resolveValue(name string, in catalog.Input, given string, hasGiven bool, dataDir string) (value string, ok bool, err error) {
	if in.Value != "" {
		return in.Value, true, nil
	}
	v := in.Default
	if v == "" && in.DataPath != "" && dataDir != "" {
		v = filepath.Join(dataDir, filepath.FromSlash(in.DataPath))
	}
	if hasGiven {
		v = given
	}
	if v == "" {
		if in.IsRequired {
			msg := "required, but no value was given"
			if in.Description != "" {
				msg += " (" + in.Description + ")"
			}
			return "", false, inputErr(name, "%s", msg)
		}
		return "", false, nil
	}
	v, err = checkFormat(name, in, v)
	if err != nil {
		return "", false, err
	}
	return v, true, nil
}

// CheckPath checks path v as the installer checks an input of format
// ("filepath", "file" or "directory") before an install: absolute, and
// existing (a directory for "directory"; for a file the server may create,
// its folder). It only stats: no file is opened or read. The dashboard
// asks it before Install is pressed, so a wrong folder is told at the form.
func CheckPath(format, v string) error {
	switch format {
	case "filepath", "file", "directory":
	default:
		return fmt.Errorf("unknown path kind %q: use filepath, file or directory", format)
	}
	_, err := checkFormat("", catalog.Input{Format: format}, v)
	var ie *InputError
	if errors.As(err, &ie) {
		return ie.Err
	}
	return err
}

func checkFormat(name string, in catalog.Input, v string) (string, error) {
	if strings.ContainsRune(v, 0) {
		return "", inputErr(name, "contains a NUL byte")
	}
	switch in.Format {
	case "", "string":
	case "number":
		f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
			return "", inputErr(name, "%q is not a number", v)
		}
		v = strings.TrimSpace(v)
	case "boolean":
		b, err := strconv.ParseBool(strings.TrimSpace(v))
		if err != nil {
			return "", inputErr(name, "%q is not a boolean: use true or false", v)
		}
		v = strconv.FormatBool(b)
	case "filepath", "file", "directory":
		if !filepath.IsAbs(v) {
			return "", inputErr(name, "%q is not an absolute path", v)
		}
		fi, err := os.Stat(v)
		if errors.Is(err, fs.ErrNotExist) && in.Format != "directory" {
			// A file the server creates (a database, a memory graph):
			// its folder has to exist.
			dir := filepath.Dir(v)
			if di, derr := os.Stat(dir); derr != nil || !di.IsDir() {
				return "", inputErr(name, "path %q does not exist, and neither does its folder %s", v, dir)
			}
			break
		}
		if err != nil {
			return "", inputErr(name, "path %q does not exist: %v", v, errors.Unwrap(err))
		}
		if in.Format == "directory" && !fi.IsDir() {
			return "", inputErr(name, "%q is not a directory", v)
		}
		if in.Format != "directory" && fi.IsDir() && in.Format == "file" {
			return "", inputErr(name, "%q is a directory, not a file", v)
		}
	default:
		return "", inputErr(name, "unknown format %q", in.Format)
	}
	if len(in.Choices) > 0 && !slices.Contains(in.Choices, v) {
		return "", inputErr(name, "%q is not one of %s", v, strings.Join(in.Choices, ", "))
	}
	return v, nil
}

// A plan is what a package's inputs turn into: argv pieces, environment,
// and the secrets to store. Secret values never enter RuntimeArgs,
// PackageArgs or Env: they appear there as placeholders or not at all.
type plan struct {
	RuntimeArgs []string
	PackageArgs []string
	Env         map[string]string // non-secret values, for config.json
	SecretEnv   map[string]string // env var name → value, for the store
	SecretArgs  map[string]string // placeholder key → value, for the store
	used        map[string]bool   // which Values keys were consumed
	dataDir     string            // the server's data folder, for DataPath defaults
	// dataFiles are the values that are a DataPath default: files in the
	// data folder the server is pointed at.
	dataFiles []string
}

func newPlan() *plan {
	return &plan{Env: map[string]string{}, SecretEnv: map[string]string{}, SecretArgs: map[string]string{}, used: map[string]bool{}}
}

// lookup finds the user's value under the first key present.
func (p *plan) lookup(values map[string]string, keys ...string) (string, bool) {
	for _, k := range keys {
		if k == "" {
			continue
		}
		if v, ok := values[k]; ok {
			p.used[k] = true
			return v, true
		}
	}
	return "", false
}

// buildPlan validates every input of pkg against values and builds the
// arguments and environment. Nothing is run or stored.
//
// dataDir is the server's data folder: inputs with a DataPath default to a
// file in it.
func buildPlan(pkg catalog.Package, values map[string]string, dataDir string) (*plan, error) {
	p := newPlan()
	p.dataDir = dataDir
	var err error
	if p.RuntimeArgs, err = p.args("runtime", pkg.RuntimeArguments, values); err != nil {
		return nil, err
	}
	if p.PackageArgs, err = p.args("package", pkg.PackageArguments, values); err != nil {
		return nil, err
	}
	for _, kv := range pkg.EnvironmentVars {
		if kv.Name == "" || strings.ContainsAny(kv.Name, "=\x00") {
			return nil, inputErr(kv.Name, "invalid environment variable name")
		}
		given, has := p.lookup(values, kv.Name)
		v, ok, err := resolveValue(kv.Name, kv.Input, given, has, p.dataDir)
		if err != nil {
			return nil, err
		}
		p.noteDataFile(kv.Input, v)
		if !ok {
			continue
		}
		if kv.IsSecret {
			p.SecretEnv[kv.Name] = v
		} else {
			p.Env[kv.Name] = v
		}
	}
	return p, nil
}

// args turns server.json arguments into argv elements. Every value is one
// element whatever it contains (spaces, quotes, ";", "$(...)"): no shell
// ever sees it. A value that starts with "-" in a positional slot is
// refused, since the program would read it as an option.
func (p *plan) args(kind string, list []catalog.Argument, values map[string]string) ([]string, error) {
	var out []string
	for i, a := range list {
		label := a.ValueHint
		if label == "" {
			label = strings.TrimLeft(a.Name, "-")
		}
		if label == "" {
			label = fmt.Sprintf("%s argument %d", kind, i+1)
		}
		var given string
		var has bool
		switch a.Type {
		case "positional":
			given, has = p.lookup(values, a.ValueHint, a.Name, label)
		case "named":
			if !strings.HasPrefix(a.Name, "-") || strings.ContainsAny(a.Name, " \t\n\x00") {
				return nil, inputErr(label, "named argument %q is not a flag", a.Name)
			}
			given, has = p.lookup(values, a.Name, strings.TrimLeft(a.Name, "-"), a.ValueHint)
		default:
			return nil, inputErr(label, "unknown argument type %q", a.Type)
		}
		// A repeated argument takes one value per line.
		var raw []string
		if a.IsRepeated && has && a.Value == "" {
			for _, v := range strings.Split(given, "\n") {
				if v = strings.TrimRight(v, "\r"); v != "" {
					raw = append(raw, v)
				}
			}
			if len(raw) == 0 {
				has = false
			}
		}
		if len(raw) == 0 {
			raw = []string{given}
		}
		for _, g := range raw {
			v, ok, err := resolveValue(label, a.Input, g, has, p.dataDir)
			if err != nil {
				return nil, err
			}
			p.noteDataFile(a.Input, v)
			if !ok {
				continue
			}
			if a.Type == "positional" && strings.HasPrefix(v, "-") && a.Value == "" && a.Format != "number" {
				return nil, inputErr(label, "%q starts with '-' and would be read as an option", v)
			}
			elem := v
			if a.IsSecret && a.Value == "" {
				key := "arg:" + label
				key = strings.ReplaceAll(key, "/", "_")
				p.SecretArgs[key] = v
				elem = secrets.Placeholder(key)
			}
			switch {
			case a.Type == "positional":
				out = append(out, elem)
			case a.Format == "boolean" && a.Value == "":
				if v == "true" {
					out = append(out, a.Name)
				}
			default:
				out = append(out, a.Name, elem)
			}
		}
	}
	return out, nil
}

// checkUnused refuses values no input asked for: a typo in --set KEY=VALUE
// would otherwise be dropped without a word.
func (p *plan) checkUnused(values map[string]string, known []string) error {
	for k := range values {
		if !p.used[k] {
			slices.Sort(known)
			known = slices.Compact(known)
			if len(known) == 0 {
				return inputErr(k, "unknown input: this package takes no inputs")
			}
			return inputErr(k, "unknown input: this package takes %s", strings.Join(known, ", "))
		}
	}
	return nil
}

// noteDataFile records v when it is in's default in the data folder.
func (p *plan) noteDataFile(in catalog.Input, v string) {
	if in.DataPath != "" && p.dataDir != "" && v == filepath.Join(p.dataDir, filepath.FromSlash(in.DataPath)) {
		p.dataFiles = append(p.dataFiles, v)
	}
}

// usesDataDir reports whether an input of pkg defaults to a file in the
// server's data folder.
func usesDataDir(pkg catalog.Package) bool {
	for _, a := range slices.Concat(pkg.RuntimeArguments, pkg.PackageArguments) {
		if a.DataPath != "" {
			return true
		}
	}
	for _, kv := range pkg.EnvironmentVars {
		if kv.DataPath != "" {
			return true
		}
	}
	return false
}

// inputNames lists the names a user can set for pkg.
func inputNames(pkg catalog.Package) []string {
	var names []string
	for _, a := range slices.Concat(pkg.RuntimeArguments, pkg.PackageArguments) {
		if a.Value != "" {
			continue
		}
		switch {
		case a.ValueHint != "":
			names = append(names, a.ValueHint)
		case a.Name != "":
			names = append(names, a.Name)
		}
	}
	for _, kv := range pkg.EnvironmentVars {
		if kv.Value == "" {
			names = append(names, kv.Name)
		}
	}
	return names
}
