package wire_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/app/api/wire"
)

// typesTS is the dashboard's hand-written mirror of this package.
var typesTS = filepath.Join("..", "..", "..", "frontend", "src", "lib", "types.ts")

// tsMirrors maps each interface of types.ts to the wire type it mirrors.
// Every interface of the file is either here or in tsUnmirrored, so a new
// interface has to say which it is. An interface that serves several wire
// types is in tsMirrorsMany.
var tsMirrors = map[string]reflect.Type{
	"Status":         reflect.TypeFor[wire.Status](),
	"Usage":          reflect.TypeFor[wire.Usage](),
	"ProcessStatus":  reflect.TypeFor[wire.ProcessStatus](),
	"Confinement":    reflect.TypeFor[wire.Confinement](),
	"Sandbox":        reflect.TypeFor[wire.Sandbox](),
	"LogLine":        reflect.TypeFor[wire.LogLine](),
	"ServerConfig":   reflect.TypeFor[wire.ServerConfig](),
	"ToolVersion":    reflect.TypeFor[wire.ToolVersion](),
	"Finding":        reflect.TypeFor[wire.Finding](),
	"HeldTool":       reflect.TypeFor[wire.HeldTool](),
	"ApprovalEvent":  reflect.TypeFor[wire.ApprovalEvent](),
	"ToolInfo":       reflect.TypeFor[wire.ToolInfo](),
	"ServerView":     reflect.TypeFor[wire.ServerView](),
	"AuthStatus":     reflect.TypeFor[wire.AuthStatus](),
	"AuthEvent":      reflect.TypeFor[wire.AuthEvent](),
	"LoginResult":    reflect.TypeFor[wire.LoginResult](),
	"LogoutResult":   reflect.TypeFor[wire.LogoutResult](),
	"Call":           reflect.TypeFor[wire.Call](),
	"CallPage":       reflect.TypeFor[wire.CallPage](),
	"Stat":           reflect.TypeFor[wire.Stat](),
	"Sample":         reflect.TypeFor[wire.Sample](),
	"TimeStat":       reflect.TypeFor[wire.TimeStat](),
	"ClientEntry":    reflect.TypeFor[wire.ClientEntry](),
	"ClientView":     reflect.TypeFor[wire.ClientView](),
	"ProfileView":    reflect.TypeFor[wire.ProfileView](),
	"ProfileRequest": reflect.TypeFor[wire.ProfileRequest](),
	"ClientOffer":    reflect.TypeFor[wire.ClientOffer](),
	"Ask":            reflect.TypeFor[wire.Ask](),
	"AskDecision":    reflect.TypeFor[wire.AskDecision](),
	"AskEvent":       reflect.TypeFor[wire.AskEvent](),
	"TryTool":        reflect.TypeFor[wire.TryTool](),
	"TryResult":      reflect.TypeFor[wire.TryResult](),
	"ClientPlan":     reflect.TypeFor[wire.ClientPlan](),
	"Backup":         reflect.TypeFor[wire.BackupView](),
	"ImportPlan":     reflect.TypeFor[wire.ImportPlan](),
	"Input":          reflect.TypeFor[wire.Input](),
	"Argument":       reflect.TypeFor[wire.Argument](),
	"KeyValue":       reflect.TypeFor[wire.KeyValue](),
	"Package":        reflect.TypeFor[wire.Package](),
	"Remote":         reflect.TypeFor[wire.Remote](),
	"CatalogEntry":   reflect.TypeFor[wire.CatalogEntry](),
	"CatalogAnswer":  reflect.TypeFor[wire.CatalogResult](),
	"TokenInfo":      reflect.TypeFor[wire.TokenView](),
	"Settings":       reflect.TypeFor[wire.Settings](),
	"StateEvent":     reflect.TypeFor[wire.StateEvent](),
	"SampleEvent":    reflect.TypeFor[wire.SampleEvent](),
	"InstallEvent":   reflect.TypeFor[wire.InstallEvent](),
}

// tsMirrorsMany are the interfaces of types.ts that mirror more than one
// wire type: each field of any of them is in the interface, optional
// unless every type always has it.
var tsMirrorsMany = map[string][]reflect.Type{
	// A server's recent lines (ServerView.recentLogs) and the "log"
	// event, which names its server.
	"LogLine": {reflect.TypeFor[wire.LogLine](), reflect.TypeFor[wire.LogEvent]()},
}

// tsUnmirrored are the interfaces of types.ts that mirror no wire type,
// each with the reason.
var tsUnmirrored = map[string]string{}

// TestTypeScriptMirrorsWire checks frontend/src/lib/types.ts against this
// package: every JSON field of a mirrored wire type is in its interface and
// every field of the interface is one of the type's, both of the same kind
// (string, number, boolean, array, object), and a field the daemon may
// leave out (omitempty, omitzero) is optional in TypeScript. A field
// renamed or added on one side fails here, not in the dashboard.
func TestTypeScriptMirrorsWire(t *testing.T) {
	src, err := os.ReadFile(typesTS)
	if err != nil {
		t.Fatalf("reading the dashboard's types: %v", err)
	}
	ts, err := parseTS(string(src))
	if err != nil {
		t.Fatalf("parsing %s: %v", typesTS, err)
	}
	mirrors := map[string][]reflect.Type{}
	for name, typ := range tsMirrors {
		mirrors[name] = []reflect.Type{typ}
	}
	for name, typs := range tsMirrorsMany {
		mirrors[name] = typs
	}
	if len(ts.interfaces) < len(mirrors) {
		t.Fatalf("%s: found %d interfaces, the mirror table has %d: the parser missed some", typesTS, len(ts.interfaces), len(mirrors))
	}
	for name := range ts.interfaces {
		if _, ok := mirrors[name]; !ok && tsUnmirrored[name] == "" {
			t.Errorf("types.ts interface %s is in neither tsMirrors nor tsUnmirrored: say which wire type it mirrors", name)
		}
	}
	for _, name := range sortedKeys(mirrors) {
		typs := mirrors[name]
		if _, ok := ts.interfaces[name]; !ok {
			t.Errorf("types.ts has no interface %s (the mirror of wire.%s)", name, typs[0].Name())
			continue
		}
		fields, err := ts.fields(name)
		if err != nil {
			t.Errorf("types.ts interface %s: %v", name, err)
			continue
		}
		for _, p := range mirrorProblems(name, fields, unionFields(typs), ts) {
			t.Error(p)
		}
	}
}

// mirrorProblems compares the fields of the TypeScript interface name with
// the JSON fields of its wire type.
func mirrorProblems(name string, ts map[string]tsField, goFields map[string]goField, file *tsFile) []string {
	var problems []string
	for _, key := range sortedKeys(goFields) {
		g := goFields[key]
		f, ok := ts[key]
		if !ok {
			problems = append(problems, fmt.Sprintf("types.ts %s lacks %q (wire.%s): add %s%s: %s;", name, key, g.goName, key, optionalMark(g.omitted), tsTypeHint(g.typ)))
			continue
		}
		if g.omitted && !f.optional {
			problems = append(problems, fmt.Sprintf("types.ts %s.%s is required, but the daemon leaves it out when empty (wire.%s is omitempty/omitzero): make it %s?", name, key, g.goName, key))
		}
		if want, got := goKind(g.typ), file.kind(f.typ); want != "any" && got != "any" && want != got {
			problems = append(problems, fmt.Sprintf("types.ts %s.%s is %s (%s), wire.%s is %s (%s)", name, key, got, f.typ, g.goName, want, g.typ))
		}
	}
	for _, key := range sortedKeys(ts) {
		if _, ok := goFields[key]; !ok {
			problems = append(problems, fmt.Sprintf("types.ts %s.%s is no JSON field of its wire type: renamed or removed on the daemon's side?", name, key))
		}
	}
	return problems
}

func optionalMark(omitted bool) string {
	if omitted {
		return "?"
	}
	return ""
}

// unionFields are the JSON fields of any of the struct types typs; one
// that some of them lack may be absent.
func unionFields(typs []reflect.Type) map[string]goField {
	sets := make([]map[string]goField, len(typs))
	for i, t := range typs {
		sets[i] = jsonFields(t)
	}
	all := map[string]goField{}
	for _, set := range sets {
		for k, v := range set {
			for _, other := range sets {
				if o, ok := other[k]; !ok || o.omitted {
					v.omitted = true
				}
			}
			if _, ok := all[k]; !ok {
				all[k] = v
			}
		}
	}
	return all
}

// goField is a JSON field of a wire type.
type goField struct {
	goName  string
	typ     reflect.Type
	omitted bool // omitempty or omitzero: absent when empty
}

// jsonFields are the JSON fields of the struct type t as encoding/json
// writes them: tagged names, embedded structs flattened, "-" left out.
func jsonFields(t reflect.Type) map[string]goField {
	fields := map[string]goField{}
	for i := range t.NumField() {
		sf := t.Field(i)
		tag := sf.Tag.Get("json")
		if tag == "-" || (!sf.IsExported() && !sf.Anonymous) {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		ft := sf.Type
		if sf.Anonymous && name == "" {
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				for k, v := range jsonFields(ft) {
					if _, ok := fields[k]; !ok {
						fields[k] = v
					}
				}
				continue
			}
		}
		if name == "" {
			name = sf.Name
		}
		omitted := slices.Contains(strings.Split(opts, ","), "omitempty") || slices.Contains(strings.Split(opts, ","), "omitzero")
		fields[name] = goField{goName: t.Name() + "." + sf.Name, typ: ft, omitted: omitted}
	}
	return fields
}

var (
	timeType        = reflect.TypeFor[time.Time]()
	durationType    = reflect.TypeFor[time.Duration]()
	wireDuration    = reflect.TypeFor[wire.Duration]()
	rawMessageType  = reflect.TypeFor[json.RawMessage]()
	marshalerType   = reflect.TypeFor[json.Marshaler]()
	tsPrimitiveKind = map[string]string{"string": "string", "number": "number", "boolean": "boolean", "unknown": "any", "any": "any"}
)

// goKind is what the JSON of a value of t is: string, number, boolean,
// array, object, or any (raw JSON, interfaces).
func goKind(t reflect.Type) string {
	switch t {
	case timeType, wireDuration:
		return "string"
	case durationType:
		return "number"
	case rawMessageType:
		return "any"
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.String:
		return "string"
	case reflect.Bool:
		return "boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
		reflect.Float32, reflect.Float64:
		return "number"
	case reflect.Slice, reflect.Array:
		return "array"
	case reflect.Map:
		return "object"
	case reflect.Struct:
		if t.Implements(marshalerType) || reflect.PointerTo(t).Implements(marshalerType) {
			return "any" // its own JSON (ServerConfig, Pool: an object with the unknown keys too)
		}
		return "object"
	}
	return "any"
}

// tsTypeHint is a TypeScript type for a Go type, for the message that asks
// for a missing field.
func tsTypeHint(t reflect.Type) string {
	switch k := goKind(t); k {
	case "array":
		return "unknown[]"
	case "object", "any":
		return "unknown"
	default:
		return k
	}
}

// tsFile is what parseTS found in types.ts.
type tsFile struct {
	interfaces map[string]tsInterface
	aliases    map[string]string // export type X = ...
}

type tsInterface struct {
	extends []string
	fields  map[string]tsField
}

type tsField struct {
	typ      string
	optional bool
}

var (
	tsDecl   = regexp.MustCompile(`(?m)^export (interface|type) (\w+)`)
	tsMember = regexp.MustCompile(`^(\w+)(\??):\s*(.+)$`)
)

// parseTS reads the exported interfaces (`export interface X [extends A,
// B] { name?: type; ... }`) and type aliases of a TypeScript file: members
// at the interface's top level, comments dropped, index signatures skipped.
func parseTS(src string) (*tsFile, error) {
	src = stripComments(src)
	f := &tsFile{interfaces: map[string]tsInterface{}, aliases: map[string]string{}}
	for _, m := range tsDecl.FindAllStringSubmatchIndex(src, -1) {
		kind, name := src[m[2]:m[3]], src[m[4]:m[5]]
		rest := src[m[1]:]
		if kind == "type" {
			def, _, ok := strings.Cut(rest, ";")
			def, found := strings.CutPrefix(strings.TrimSpace(def), "=")
			if !ok || !found {
				return nil, fmt.Errorf("type %s: no `= ...;`", name)
			}
			f.aliases[name] = strings.TrimSpace(def)
			continue
		}
		head, body, ok := strings.Cut(rest, "{")
		if !ok {
			return nil, fmt.Errorf("interface %s: no body", name)
		}
		in := tsInterface{fields: map[string]tsField{}}
		if ext, ok := strings.CutPrefix(strings.TrimSpace(head), "extends"); ok {
			for e := range strings.SplitSeq(ext, ",") {
				in.extends = append(in.extends, strings.TrimSpace(e))
			}
		}
		members, err := topLevelMembers(body)
		if err != nil {
			return nil, fmt.Errorf("interface %s: %w", name, err)
		}
		for _, mem := range members {
			if strings.HasPrefix(mem, "[") {
				continue // an index signature: [k: string]: unknown
			}
			mm := tsMember.FindStringSubmatch(mem)
			if mm == nil {
				return nil, fmt.Errorf("interface %s: cannot read member %q", name, mem)
			}
			in.fields[mm[1]] = tsField{typ: strings.TrimSpace(mm[3]), optional: mm[2] == "?"}
		}
		f.interfaces[name] = in
	}
	return f, nil
}

// topLevelMembers splits an interface's body (from after its "{") into
// its members, ended by ";" or a line break outside nested braces, up to
// the "}" that closes it.
func topLevelMembers(body string) ([]string, error) {
	var members []string
	depth, start := 0, 0
	add := func(end int) {
		if m := strings.TrimSpace(body[start:end]); m != "" {
			members = append(members, m)
		}
		start = end + 1
	}
	for i, c := range body {
		switch c {
		case '{', '(', '<', '[':
			depth++
		case ']', ')':
			depth--
		case '>':
			if i > 0 && body[i-1] != '=' { // not an arrow
				depth--
			}
		case '}':
			if depth == 0 {
				add(i)
				return members, nil
			}
			depth--
		case ';', '\n':
			if depth == 0 {
				add(i)
			}
		}
	}
	return nil, fmt.Errorf("no closing }")
}

// stripComments drops // and /* */ comments (types.ts has no strings that
// hold them).
func stripComments(src string) string {
	src = regexp.MustCompile(`(?s)/\*.*?\*/`).ReplaceAllString(src, "")
	return regexp.MustCompile(`//[^\n]*`).ReplaceAllString(src, "")
}

// fields are the members of the interface name with those of the
// interfaces it extends.
func (f *tsFile) fields(name string) (map[string]tsField, error) {
	in, ok := f.interfaces[name]
	if !ok {
		return nil, fmt.Errorf("extends %s, which types.ts does not declare", name)
	}
	all := map[string]tsField{}
	for _, e := range in.extends {
		parent, err := f.fields(e)
		if err != nil {
			return nil, err
		}
		for k, v := range parent {
			all[k] = v
		}
	}
	for k, v := range in.fields {
		all[k] = v
	}
	return all, nil
}

// kind is what JSON the TypeScript type typ allows: string, number,
// boolean, array, object, or any (unknown, or a union of kinds).
func (f *tsFile) kind(typ string) string {
	var kinds []string
	for _, alt := range splitTopLevel(typ, '|') {
		alt = strings.TrimSpace(alt)
		if alt == "null" || alt == "undefined" || alt == "" {
			continue
		}
		var k string
		switch {
		case strings.HasSuffix(alt, "[]") || strings.HasPrefix(alt, "Array<"):
			k = "array"
		case strings.HasPrefix(alt, "Record<") || strings.HasPrefix(alt, "{"):
			k = "object"
		case strings.HasPrefix(alt, "'") || strings.HasPrefix(alt, `"`):
			k = "string"
		case tsPrimitiveKind[alt] != "":
			k = tsPrimitiveKind[alt]
		case f.aliases[alt] != "":
			k = f.kind(f.aliases[alt])
		default:
			if _, ok := f.interfaces[alt]; ok {
				k = "object"
			} else {
				k = "any"
			}
		}
		if !slices.Contains(kinds, k) {
			kinds = append(kinds, k)
		}
	}
	if len(kinds) != 1 {
		return "any"
	}
	return kinds[0]
}

// splitTopLevel splits s at each sep outside brackets.
func splitTopLevel(s string, sep rune) []string {
	var parts []string
	depth, start := 0, 0
	for i, c := range s {
		switch c {
		case '{', '(', '<', '[':
			depth++
		case '}', ')', '>', ']':
			depth--
		case sep:
			if depth == 0 {
				parts = append(parts, s[start:i])
				start = i + 1
			}
		}
	}
	return append(parts, s[start:])
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// TestTypeScriptParser checks the parser and the comparison on a file
// the tree does not hold: a nested object's members stay its own, extends
// adds the parent's, and each kind of disagreement is reported.
func TestTypeScriptParser(t *testing.T) {
	src := `
/** A doc comment with a { brace. */
export interface Base {
  id: number; // trailing comment
}
export type Level = 'a' | 'b';
export interface X extends Base {
  name?: string;
  pool?: { mode?: string; min?: number; [k: string]: unknown };
  level: Level;
  items: (string | Base)[];
  cb?: (a: number) => void;
  [k: string]: unknown;
}
`
	f, err := parseTS(src)
	if err != nil {
		t.Fatal(err)
	}
	fields, err := f.fields("X")
	if err != nil {
		t.Fatal(err)
	}
	if got := sortedKeys(fields); !slices.Equal(got, []string{"cb", "id", "items", "level", "name", "pool"}) {
		t.Errorf("X's fields = %q", got)
	}
	for typ, want := range map[string]string{"Level": "string", "(string | Base)[]": "array", "Base": "object", "string | number": "any", "Record<string, string> | null": "object"} {
		if got := f.kind(typ); got != want {
			t.Errorf("kind(%q) = %s, want %s", typ, got, want)
		}
	}
	type wireX struct {
		ID    int    `json:"id"`
		Name  string `json:"name"`
		Level string `json:"level,omitempty"`
		Items []string
		Extra bool `json:"extra"`
	}
	problems := mirrorProblems("X", fields, jsonFields(reflect.TypeFor[wireX]()), f)
	want := []string{`lacks "Items"`, `lacks "extra"`, "X.level is required", "X.cb is no JSON field", "X.items is no JSON field", "X.pool is no JSON field"}
	if len(problems) != len(want) {
		t.Fatalf("problems = %q, want %d", problems, len(want))
	}
	for i, w := range want {
		if !strings.Contains(problems[i], w) {
			t.Errorf("problem %d = %q, want it to say %q", i, problems[i], w)
		}
	}
}
