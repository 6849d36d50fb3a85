package api

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/app/api/wire"
	"github.com/switchboardhq/switchboard/app/approvals"
	"github.com/switchboardhq/switchboard/app/catalog"
	"github.com/switchboardhq/switchboard/app/catalog/install"
	"github.com/switchboardhq/switchboard/app/clients"
	"github.com/switchboardhq/switchboard/app/config"
	"github.com/switchboardhq/switchboard/app/events"
	"github.com/switchboardhq/switchboard/app/gateway"
	"github.com/switchboardhq/switchboard/app/history"
	"github.com/switchboardhq/switchboard/app/record"
	"github.com/switchboardhq/switchboard/supervisor"
)

// Every wire type that carries an internal type's JSON has the same JSON
// fields as that type: names, options (omitempty, omitzero) and kinds, down
// to the nested types. A field added to an internal type fails here until
// the wire type (and the conversion next to its handler) has it too.
func TestWireMirrorsInternalTypes(t *testing.T) {
	pairs := []struct{ internal, wire any }{
		{config.Server{}, wire.ServerConfig{}},
		{supervisor.ProcessStatus{}, wire.ProcessStatus{}},
		{supervisor.LogLine{}, wire.LogLine{}},
		{gateway.ToolInfo{}, wire.ToolInfo{}},
		{history.CallPage{}, wire.CallPage{}},
		{history.Stat{}, wire.Stat{}},
		{history.TimeStat{}, wire.TimeStat{}},
		{history.Sample{}, wire.Sample{}},
		{history.Event{}, wire.LifecycleEvent{}},
		{catalog.Result{}, wire.CatalogResult{}},
		{install.Tool{}, wire.Tool{}},
		{clients.Entry{}, wire.ClientEntry{}},
		{clients.Conflict{}, wire.Conflict{}},
		// The data of the events the daemon publishes.
		{events.Log{}, wire.LogEvent{}},
		{events.Sample{}, wire.SampleEvent{}},
		{events.CallStart{}, wire.CallStartEvent{}},
		{events.Dropped{}, wire.DroppedEvent{}},
		{record.Event{}, wire.StateEvent{}}, // the feed's "state" events (the daemon's conversion of the supervisor's)
	}
	for _, p := range pairs {
		in, out := reflect.TypeOf(p.internal), reflect.TypeOf(p.wire)
		if got, want := jsonShape(out), jsonShape(in); got != want {
			t.Errorf("%v's JSON differs from %v's:\n wire:     %s\n internal: %s", out, in, got, want)
		}
	}
}

// jsonShape describes the JSON encoding/json gives values of t: for a
// struct, its fields' names, options and shapes, sorted; embedded structs
// without a name of their own are flattened, as encoding/json does.
func jsonShape(t reflect.Type) string {
	switch {
	case t == reflect.TypeFor[time.Time]():
		return "time"
	case t == reflect.TypeFor[time.Duration]():
		return "duration"
	case t == reflect.TypeFor[json.RawMessage]():
		return "raw"
	case t == reflect.TypeFor[*config.Sandbox]():
		// Written by its MarshalJSON (false, true or an object), which
		// the wire keeps verbatim.
		return "raw"
	}
	switch t.Kind() {
	case reflect.Pointer:
		return "*" + jsonShape(t.Elem())
	case reflect.Slice:
		return "[]" + jsonShape(t.Elem())
	case reflect.Map:
		return "map[" + jsonShape(t.Key()) + "]" + jsonShape(t.Elem())
	case reflect.Struct:
		return "{" + strings.Join(fieldShapes(t), " ") + "}"
	default:
		return t.Kind().String() // named string types are strings on the wire
	}
}

// wireComputed are the fields a wire type adds to the internal type it
// mirrors, computed by the API from it (an entry's kind, from its packages
// and remotes): the internal type has no field to mirror.
var wireComputed = map[reflect.Type][]string{
	reflect.TypeFor[wire.CatalogEntry](): {"kind"},
}

func fieldShapes(t reflect.Type) []string {
	var out []string
	for f := range t.Fields() {
		tag := f.Tag.Get("json")
		name, opts, _ := strings.Cut(tag, ",")
		switch {
		case !f.IsExported() || name == "-" || slices.Contains(wireComputed[t], name):
			continue
		case f.Anonymous && name == "" && f.Type.Kind() == reflect.Struct:
			out = append(out, fieldShapes(f.Type)...)
			continue
		case name == "":
			name = f.Name
		}
		out = append(out, fmt.Sprintf("%s,%s:%s", name, opts, jsonShape(f.Type)))
	}
	slices.Sort(out)
	return out
}

// A server's entry goes over the wire byte for byte as config.json has
// it, unknown keys (of the entry and of its pool) included, and a client
// that reads it and sends it back sends the same bytes.
func TestServerConfigOnTheWire(t *testing.T) {
	const entry = `{"command":"npx","args":["-y","a && b <c>"],"env":{"B":"2","A":"1"},"cwd":"/tmp","enabled":false,` +
		`"pool":{"mode":"session","min":1,"max":3,"idleTimeout":"90s","later":{"x":[1,2]}},"timeout":"1h30m",` +
		`"disabledTools":["rm"],"alias":"n","secretEnv":["TOKEN"],"roots":["/home"],` +
		`"install":{"entry":"io.github.x/y","version":"1.2.3","type":"npm"},"note":"mine","zeta":null}`
	var sc config.Server
	if err := json.Unmarshal([]byte(entry), &sc); err != nil {
		t.Fatal(err)
	}
	want, err := json.Marshal(sc)
	if err != nil {
		t.Fatal(err)
	}
	got, err := json.Marshal(serverConfig(sc))
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Errorf("served:\n got  %s\n want %s", got, want)
	}

	var back wire.ServerConfig
	if err := json.Unmarshal(got, &back); err != nil {
		t.Fatal(err)
	}
	if string(back.Unknown["note"]) != `"mine"` || string(back.Pool.Unknown["later"]) != `{"x":[1,2]}` ||
		back.Timeout.Duration != 90*time.Minute || back.IsEnabled() {
		t.Errorf("read back: %+v", back)
	}
	again, err := json.Marshal(back)
	if err != nil {
		t.Fatal(err)
	}
	if string(again) != string(want) {
		t.Errorf("sent back:\n got  %s\n want %s", again, want)
	}

	// A remote's oauth: the name of its client secret, never a value (the
	// entry has none to give).
	const remote = `{"url":"https://mcp.example.com/mcp","secretHeaders":{"X-Key":"key"},` +
		`"oauth":{"clientId":"abc","clientSecret":"client-secret","scopes":["read"],"clientMetadataUrl":"https://example.com/sb.json"}}`
	var rc config.Server
	if err := json.Unmarshal([]byte(remote), &rc); err != nil {
		t.Fatal(err)
	}
	if got, err := json.Marshal(serverConfig(rc)); err != nil || string(got) != remote {
		t.Errorf("remote served:\n got  %s (%v)\n want %s", got, err, remote)
	}

	// The zero entry, and null.
	if got, _ := json.Marshal(serverConfig(config.Server{})); string(got) != `{"command":""}` {
		t.Errorf("zero entry: %s", got)
	}
	kept := wire.ServerConfig{Command: "x"}
	if err := json.Unmarshal([]byte("null"), &kept); err != nil || kept.Command != "x" {
		t.Errorf("null: %+v, %v", kept, err)
	}
	var bad wire.ServerConfig
	if err := json.Unmarshal([]byte(`{"command":"x","timeout":"soon"}`), &bad); err == nil ||
		!strings.Contains(err.Error(), `invalid duration "soon"`) {
		t.Errorf("a bad duration: %v", err)
	}
}

// The constants clients read from the wire package are the daemon's.
func TestWireConstants(t *testing.T) {
	for _, c := range []struct{ wire, internal string }{
		{wire.StateStopped, string(supervisor.StateStopped)},
		{wire.StateStarting, string(supervisor.StateStarting)},
		{wire.StateRunning, string(supervisor.StateRunning)},
		{wire.StateBackoff, string(supervisor.StateBackoff)},
		{wire.StateFailing, string(supervisor.StateFailing)},
		{wire.StateStopping, string(supervisor.StateStopping)},
		{wire.TypeCall, events.TypeCall},
		{wire.TypeCallStart, events.TypeCallStart},
		{wire.TypeLog, events.TypeLog},
		{wire.TypeState, events.TypeState},
		{wire.TypeSample, events.TypeSample},
		{wire.TypeInstall, events.TypeInstall},
		{wire.TypeConfig, events.TypeConfig},
		{wire.TypeDropped, events.TypeDropped},
		{wire.TypeApproval, events.TypeApproval},
		{wire.TypeAuth, events.TypeAuth},
		{wire.TypeAsk, events.TypeAsk},
		{wire.DecidedByElicitation, record.DecidedByElicitation},
		{wire.DecidedByInputRequired, record.DecidedByInputRequired},
		{wire.DecidedByDashboard, record.DecidedByDashboard},
		{wire.DecidedByTray, record.DecidedByTray},
		{wire.DecidedByCLI, record.DecidedByCLI},
		{wire.DecidedByTimeout, record.DecidedByTimeout},
		{wire.ApprovalHeld, events.ApprovalHeld},
		{wire.ApprovalApproved, events.ApprovalApproved},
		{wire.ChangeNew, approvals.ChangeNew},
		{wire.ChangeDescription, approvals.ChangeDescription},
		{wire.ChangeSchema, approvals.ChangeSchema},
		{wire.ChangeBoth, approvals.ChangeBoth},
		{wire.OutcomeOK, record.OutcomeOK},
		{wire.PoolShared, config.PoolShared},
		{wire.PoolSession, config.PoolSession},
	} {
		if c.wire != c.internal {
			t.Errorf("wire has %q, the daemon %q", c.wire, c.internal)
		}
	}
	if slices.Contains(eventTypes, wire.TypeReset) {
		t.Errorf("%q is a type of the daemon's feed; the API sends it only first", wire.TypeReset)
	}
	if wire.DefaultActionTimeout != DefaultActionTimeout {
		t.Errorf("wire.DefaultActionTimeout = %v, the API's %v", wire.DefaultActionTimeout, DefaultActionTimeout)
	}
	if want := (wire.Duration{Duration: 90 * time.Second}).String(); want != (config.Duration{Duration: 90 * time.Second}).String() {
		t.Errorf("durations are written differently: wire %s", want)
	}
}

// A remote server's entry goes through the API as it is in the file: its
// url, transport and headers, and no command.
func TestRemoteServerConfigOnTheWire(t *testing.T) {
	sc := config.Server{URL: "https://mcp.example.com/mcp", Transport: "sse", Headers: map[string]string{"X-Team": "a"},
		SecretHeaders: map[string]string{"Authorization": "tok"}}
	got, err := json.Marshal(serverConfig(sc))
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"url":"https://mcp.example.com/mcp","transport":"sse","headers":{"X-Team":"a"},"secretHeaders":{"Authorization":"tok"}}`
	if string(got) != want {
		t.Errorf("served:\n got  %s\n want %s", got, want)
	}
	var back config.Server
	if err := json.Unmarshal(got, &back); err != nil || back.URL != sc.URL || back.SecretHeaders["Authorization"] != "tok" {
		t.Errorf("read back into a config entry: %+v, %v", back, err)
	}
}
