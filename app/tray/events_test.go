package tray

import (
	"strings"
	"testing"
)

func TestParseEvents(t *testing.T) {
	stream := ": switchboard events\n\n" +
		"id: 7\nevent: state\ndata: {\"server\":\"fs\",\n" +
		"data: \"state\":\"failing\"}\n\n" +
		"event: reset\ndata: {}\n\n" +
		": keep-alive\n\n" +
		"id: 9\ndata: plain\n\n"
	var got []Event
	if err := parseEvents(strings.NewReader(stream), func(e Event) { got = append(got, e) }); err != nil {
		t.Fatal(err)
	}
	want := []Event{
		{ID: "7", Type: "state", Data: []byte("{\"server\":\"fs\",\n\"state\":\"failing\"}")},
		{Type: "reset", Data: []byte("{}")},
		{ID: "9", Type: "message", Data: []byte("plain")},
	}
	if len(got) != len(want) {
		t.Fatalf("got %d events: %+v", len(got), got)
	}
	for i := range want {
		if got[i].ID != want[i].ID || got[i].Type != want[i].Type || string(got[i].Data) != string(want[i].Data) {
			t.Errorf("event %d = %+v %s, want %+v %s", i, got[i], got[i].Data, want[i], want[i].Data)
		}
	}
}
