package history

import (
	"bufio"
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"strconv"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/switchboardhq/switchboard/app/record"
)

func exportFixture(t *testing.T) (*Store, []Call) {
	s := openTest(t, testOptions())
	for i := range 300 {
		c := call(i, []string{"files", "web"}[i%2], "read", `{"n":`+strconv.Itoa(i)+`,"note":"a,b \"c\"\nd","password":"x"}`)
		if i%7 == 0 {
			c.Outcome, c.Error = record.OutcomeTimeout, "took, too \"long\""
		}
		s.RecordCall(c)
	}
	flush(t, s)
	var want []Call
	q := CallQuery{Server: "files", Limit: 40}
	for {
		p, err := s.Calls(context.Background(), q)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range p.Calls {
			full, err := s.Call(context.Background(), c.ID)
			if err != nil {
				t.Fatal(err)
			}
			want = append(want, full)
		}
		if p.Next == "" {
			break
		}
		q.Cursor = p.Next
	}
	if len(want) != 150 {
		t.Fatalf("%d calls in the fixture", len(want))
	}
	return s, want
}

func TestExportJSONL(t *testing.T) {
	s, want := exportFixture(t)
	var buf bytes.Buffer
	if err := s.Export(context.Background(), CallQuery{Server: "files", Limit: 3, Cursor: "ignored"}, &buf, "jsonl"); err != nil {
		t.Fatal(err)
	}
	var got []Call
	sc := bufio.NewScanner(&buf)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var c Call
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			t.Fatalf("line %d: %v", len(got)+1, err)
		}
		got = append(got, c)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("JSONL export (-want +got):\n%s", diff)
	}
}

func TestExportCSV(t *testing.T) {
	s, want := exportFixture(t)
	var buf bytes.Buffer
	if err := s.Export(context.Background(), CallQuery{Server: "files"}, &buf, "csv"); err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(&buf).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(CSVHeader, recs[0]); diff != "" {
		t.Fatalf("header (-want +got):\n%s", diff)
	}
	var got []Call
	for _, r := range recs[1:] {
		id, _ := strconv.ParseInt(r[0], 10, 64)
		start, err := time.Parse(time.RFC3339Nano, r[1])
		if err != nil {
			t.Fatal(err)
		}
		dur, _ := strconv.ParseInt(r[2], 10, 64)
		size, _ := strconv.Atoi(r[14])
		pid, _ := strconv.Atoi(r[16])
		c := Call{ID: id, Start: start, Duration: time.Duration(dur) * time.Microsecond, ClientLabel: r[3],
			ClientName: r[4], ClientVersion: r[5], Session: r[6], Endpoint: r[7], Server: r[8], Method: r[9],
			Name: r[10], Outcome: r[12], Error: r[13], ResponseSize: size, ResponsePreview: r[15], PID: pid,
			Tool: r[17], Unknown: r[18]}
		if r[11] != "" {
			c.Arguments = json.RawMessage(r[11])
		}
		got = append(got, c)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("CSV export (-want +got):\n%s", diff)
	}
	if err := s.Export(context.Background(), CallQuery{}, &buf, "xml"); err == nil {
		t.Error("unknown format accepted")
	}
}

func TestExportCSVEscapesFormulas(t *testing.T) {
	s := openTest(t, testOptions())
	c := call(1, "sheet", "=HYPERLINK(\"http://evil\",\"x\")", `{"a":1}`)
	c.Error = "@SUM(1+1)"
	c.ClientLabel, c.ClientName, c.ClientVersion, c.Session = "+cmd", "-2+3", "\tTAB", "\rCR"
	c.Response = json.RawMessage(`-1`)
	s.RecordCall(c)
	flush(t, s)
	var buf bytes.Buffer
	if err := s.Export(context.Background(), CallQuery{}, &buf, "csv"); err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(&buf).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	row := recs[1]
	for col, want := range map[int]string{3: "'+cmd", 4: "'-2+3", 5: "'\tTAB", 6: "'\rCR", 10: `'=HYPERLINK("http://evil","x")`,
		13: "'@SUM(1+1)", 15: "'-1", 11: `{"a":1}`, 8: "sheet", 0: "1"} {
		if row[col] != want {
			t.Errorf("column %s = %q, want %q", CSVHeader[col], row[col], want)
		}
	}
}
