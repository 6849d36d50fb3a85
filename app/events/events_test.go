package events

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func publishN(t *testing.T, b *Bus, n int) []uint64 {
	t.Helper()
	ids := make([]uint64, n)
	for i := range ids {
		id, err := b.Publish(TypeLog, Log{Server: "s", Text: string(rune('a' + i%26))})
		if err != nil {
			t.Fatal(err)
		}
		ids[i] = id
	}
	return ids
}

func TestIDsIncreaseAndDataIsJSON(t *testing.T) {
	b := New(16)
	before := b.LastID()
	ids := publishN(t, b, 3)
	if ids[0] != before+1 || ids[1] != ids[0]+1 || ids[2] != ids[1]+1 {
		t.Fatalf("ids = %v after LastID %d, want consecutive", ids, before)
	}
	if b.LastID() != ids[2] {
		t.Fatalf("LastID = %d, want %d", b.LastID(), ids[2])
	}
	if _, err := b.Publish(TypeLog, func() {}); err == nil {
		t.Fatal("publishing a func: no error")
	}
}

// TestRingKeepsAtMostItsBytes: the ring drops its oldest events when their
// data would pass its byte bound, keeps the newest one even when it alone
// passes it, and a subscriber whose next event was dropped so is told to
// start over with what is left.
func TestRingKeepsAtMostItsBytes(t *testing.T) {
	backlog := func(b *Bus, since uint64) (ids []uint64, reset bool) {
		s := b.Subscribe(since, 0)
		defer s.Close()
		for _, ev := range s.Backlog {
			ids = append(ids, ev.ID)
		}
		return ids, s.Reset
	}
	b := New(16)
	b.maxBytes = 100
	start := b.LastID()
	var ids []uint64
	for range 6 {
		ids = append(ids, b.PublishJSON(TypeLog, []byte(`"`+strings.Repeat("x", 28)+`"`))) // 30 bytes
	}
	if got, reset := backlog(b, start); !reset || !slices.Equal(got, ids[3:]) || b.bytes != 90 {
		t.Errorf("after six events of 30 bytes in 100: backlog %v (reset %v, %d bytes), want %v, reset", got, reset, b.bytes, ids[3:])
	}
	if got, reset := backlog(b, ids[3]); reset || !slices.Equal(got, ids[4:]) {
		t.Errorf("since the oldest kept: backlog %v (reset %v), want %v", got, reset, ids[4:])
	}
	big := b.PublishJSON(TypeLog, []byte(`"`+strings.Repeat("y", 200)+`"`))
	if got, reset := backlog(b, ids[5]); reset || !slices.Equal(got, []uint64{big}) || b.bytes != 202 {
		t.Errorf("an event bigger than the bound: backlog %v (reset %v, %d bytes), want only it", got, reset, b.bytes)
	}
	// A full ring of small events makes room by count as before, and the
	// bytes of what it dropped are no longer counted.
	for range 40 {
		b.PublishJSON(TypeLog, []byte(`1`))
	}
	if got, _ := backlog(b, start); len(got) != 16 || b.bytes != 16 {
		t.Errorf("after 40 one-byte events: %d kept, %d bytes, want 16 and 16", len(got), b.bytes)
	}
}

// TestRingGrowsAsItFills: the ring starts small and doubles while full, up
// to its size, keeping every event (and its data) across each growth; an
// event dropped for the byte bound leaves room that is used before the
// ring grows again.
func TestRingGrowsAsItFills(t *testing.T) {
	const size = 200 // not a power of two: the last growth is cut to it
	b := New(size)
	if len(b.ring) != firstRing {
		t.Fatalf("a new ring has %d slots, want %d", len(b.ring), firstRing)
	}
	start := b.LastID()
	check := func(what string, want []string) {
		t.Helper()
		s := b.Subscribe(start, 0)
		defer s.Close()
		var got []string
		for _, ev := range s.Backlog {
			got = append(got, fmt.Sprintf("%d=%s", ev.ID-start, ev.Data))
		}
		if !slices.Equal(got, want) {
			t.Fatalf("%s: backlog %v, want %v", what, got, want)
		}
	}
	var want []string
	publish := func(n int) {
		for range n {
			id := b.PublishJSON(TypeLog, []byte(strconv.Itoa(len(want)+1)))
			want = append(want, fmt.Sprintf("%d=%d", id-start, len(want)+1))
		}
	}
	publish(firstRing + 1)
	if len(b.ring) != 2*firstRing {
		t.Fatalf("after %d events the ring has %d slots, want %d", firstRing+1, len(b.ring), 2*firstRing)
	}
	check("after the first growth", want)
	publish(size - len(want))
	if len(b.ring) != size {
		t.Fatalf("after %d events the ring has %d slots, want %d", size, len(b.ring), size)
	}
	check("full", want)
	publish(50)
	want = want[50:]
	if len(b.ring) != size {
		t.Fatalf("past its size the ring has %d slots, want %d", len(b.ring), size)
	}
	check("past its size", want)

	// The byte bound drops the oldest events of a ring that has not grown
	// to its size yet: their slots take the next events first.
	b = New(size)
	start, want = b.LastID(), nil
	b.maxBytes = 40 * 2     // forty events of two bytes
	publish(firstRing + 20) // ids 1-9 one byte, 10-84 two
	if len(b.ring) != firstRing {
		t.Fatalf("a ring that the byte bound keeps at %d events has %d slots, want %d", b.next-b.oldest, len(b.ring), firstRing)
	}
	check("bounded by its bytes", want[len(want)-40:])
	// Grown from there, past the events already dropped.
	b.maxBytes = DefaultRingBytes
	publish(size)
	if len(b.ring) != size {
		t.Fatalf("grown after dropping events: %d slots, want %d", len(b.ring), size)
	}
	check("grown after dropping events", want[len(want)-size:])
}

func TestSubscribeSince(t *testing.T) {
	b := New(4)
	start := b.LastID()
	ids := publishN(t, b, 6) // the ring keeps the last 4: ids[2..5]

	tests := []struct {
		name      string
		since     uint64
		wantReset bool
		want      []uint64
	}{
		{"new events only", 0, false, nil},
		{"up to date", ids[5], false, nil},
		{"missed two", ids[3], false, ids[4:]},
		{"oldest kept", ids[1], false, ids[2:]},
		{"missed too many", ids[0], true, ids[2:]},
		{"an earlier daemon's id", start - 100, true, ids[2:]},
		{"an id from the future", ids[5] + 10, true, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := b.Subscribe(tt.since, 0)
			defer s.Close()
			var got []uint64
			for _, ev := range s.Backlog {
				got = append(got, ev.ID)
			}
			if s.Reset != tt.wantReset || len(got) != len(tt.want) {
				t.Fatalf("Reset=%v backlog=%v, want Reset=%v backlog=%v", s.Reset, got, tt.wantReset, tt.want)
			}
			for i := range got {
				if got[i] != tt.want[i] {
					t.Fatalf("backlog=%v, want %v", got, tt.want)
				}
			}
		})
	}
}

func TestLiveDeliveryInOrder(t *testing.T) {
	b := New(0)
	s := b.Subscribe(0, 100)
	defer s.Close()
	ids := publishN(t, b, 50)
	for _, want := range ids {
		ev := <-s.C()
		if ev.ID != want || ev.Type != TypeLog {
			t.Fatalf("got %d %s, want %d log", ev.ID, ev.Type, want)
		}
		var l Log
		if err := json.Unmarshal(ev.Data, &l); err != nil || l.Server != "s" {
			t.Fatalf("data %s: %v", ev.Data, err)
		}
	}
}

// A subscriber that does not read is cut off instead of blocking the
// publisher, and can resume from the ring with the last id it saw.
func TestSlowSubscriberIsCutOffAndResumes(t *testing.T) {
	b := New(64)
	slow := b.Subscribe(0, 2)
	ids := publishN(t, b, 10) // never blocks
	var seen []uint64
	for ev := range slow.C() { // closed after the first two
		seen = append(seen, ev.ID)
	}
	if !slow.Lagged() || len(seen) != 2 {
		t.Fatalf("lagged=%v seen=%v, want cut off after 2", slow.Lagged(), seen)
	}
	again := b.Subscribe(seen[len(seen)-1], 0)
	defer again.Close()
	if again.Reset || len(again.Backlog) != 8 || again.Backlog[0].ID != ids[2] {
		t.Fatalf("resume: reset=%v backlog=%d, want the 8 missed", again.Reset, len(again.Backlog))
	}
}

func TestCloseEndsSubscriptions(t *testing.T) {
	b := New(0)
	s := b.Subscribe(0, 0)
	s.Close()
	s.Close() // twice is fine
	if _, ok := <-s.C(); ok {
		t.Fatal("closed subscription delivered")
	}
	other := b.Subscribe(0, 0)
	b.Close()
	if _, ok := <-other.C(); ok {
		t.Fatal("subscription open after Bus.Close")
	}
	if id, err := b.Publish(TypeLog, Log{}); err != nil || id != 0 {
		t.Fatalf("publish after close = %d, %v", id, err)
	}
	late := b.Subscribe(0, 0)
	if _, ok := <-late.C(); ok {
		t.Fatal("subscription after close is open")
	}
}

func TestConcurrentPublishers(t *testing.T) {
	b := New(0)
	s := b.Subscribe(0, 4000)
	defer s.Close()
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 500 {
				if _, err := b.Publish(TypeSample, Sample{Server: "s"}); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	var last uint64
	for range 2000 {
		ev := <-s.C()
		if ev.ID <= last {
			t.Fatalf("id %d after %d: not increasing", ev.ID, last)
		}
		last = ev.ID
	}
}

// TestCallStartAppendJSON: the hand-made encoding of a CallStart is byte
// for byte what json.Marshal makes of it, names that need escapes and
// times of every precision included.
func TestCallStartAppendJSON(t *testing.T) {
	at := time.Date(2026, 12, 2, 16, 30, 1, 123456789, time.UTC)
	for _, tt := range []struct {
		name string
		c    CallStart
	}{
		{"plain", CallStart{Start: at, Server: "echo", Endpoint: "echo", Method: "tools/call", Name: "echo", ClientLabel: "cli", ClientName: "cursor", Session: "ABC123"}},
		{"with tool", CallStart{Start: at, Server: "alpha", Method: "tools/call", Name: "alpha__echo", Tool: "echo"}},
		{"tool escaped", CallStart{Start: at, Tool: "file:///a b/<x>"}},
		{"empty", CallStart{}},
		{"whole second", CallStart{Start: at.Truncate(time.Second), Server: "s"}},
		{"other zone", CallStart{Start: at.In(time.FixedZone("x", 5*3600+1800)), Name: "n"}},
		{"escapes", CallStart{Start: at, Server: `q"uote\back`, Name: "<b>&amp;</b>", ClientName: "tab\there\nnewline\x00", Session: "é ünï 😀", ClientLabel: "\u2028"}},
		{"invalid UTF-8", CallStart{Start: at, Name: "bad\xff\xfe"}},
		{"year past 9999", CallStart{Start: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.c.AppendJSON([]byte("prefix"))
			want, err := json.Marshal(tt.c)
			if err != nil {
				// json.Marshal refuses a year past 9999; what is appended
				// must still be valid JSON with the rest of the fields.
				if !json.Valid(got[len("prefix"):]) {
					t.Fatalf("AppendJSON = %s, not valid JSON", got)
				}
				return
			}
			if string(got) != "prefix"+string(want) {
				t.Errorf("AppendJSON = %s\nwant        prefix%s", got, want)
			}
		})
	}
}
