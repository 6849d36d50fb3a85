package api

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/app/api/wire"
	"github.com/switchboardhq/switchboard/app/history"
	"github.com/switchboardhq/switchboard/app/record"
)

// TestWireCallCopiesEveryField fills every field of a history.Call with a
// value of its own and checks that wireCall carries each one into the
// wire.Call field of the same name: a field added to both types but not
// to the conversion fails here.
func TestWireCallCopiesEveryField(t *testing.T) {
	var in history.Call
	v := reflect.ValueOf(&in).Elem()
	for i := range v.NumField() {
		f := v.Field(i)
		switch {
		case f.Type() == reflect.TypeFor[time.Time]():
			f.Set(reflect.ValueOf(time.Date(2026, 12, 1, 10, 0, i, 0, time.UTC)))
		case f.Type() == reflect.TypeFor[json.RawMessage]():
			f.Set(reflect.ValueOf(json.RawMessage(`{"field":` + string(rune('0'+i%10)) + `}`)))
		case f.Kind() == reflect.String:
			f.SetString("value of " + v.Type().Field(i).Name)
		case f.Type() == reflect.TypeFor[*time.Time]():
			at := time.Date(2026, 12, 2, 10, 0, i, 0, time.UTC)
			f.Set(reflect.ValueOf(&at))
		case f.Kind() == reflect.Bool:
			f.SetBool(true)
		case f.CanInt():
			f.SetInt(int64(1000 + i))
		default:
			t.Fatalf("history.Call.%s is a %s: teach this test to fill it", v.Type().Field(i).Name, f.Type())
		}
	}
	out := reflect.ValueOf(wireCall(in))
	if n, m := v.NumField(), out.NumField(); n != m {
		t.Errorf("history.Call has %d fields, wire.Call %d", n, m)
	}
	for i := range v.NumField() {
		name := v.Type().Field(i).Name
		got := out.FieldByName(name)
		if !got.IsValid() {
			t.Errorf("wire.Call has no field %s", name)
			continue
		}
		if !reflect.DeepEqual(got.Interface(), v.Field(i).Interface()) {
			t.Errorf("wire.Call.%s = %v, want %v (history.Call's)", name, got.Interface(), v.Field(i).Interface())
		}
	}
	// The two names of what is unknown are the same everywhere.
	if wire.UnknownServer != record.UnknownServer || wire.UnknownTool != record.UnknownTool {
		t.Errorf("wire's Unknown values %q, %q differ from record's %q, %q", wire.UnknownServer, wire.UnknownTool, record.UnknownServer, record.UnknownTool)
	}
}
