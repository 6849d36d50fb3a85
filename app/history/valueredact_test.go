package history

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/app/record"
)

// Made-up credentials of the shapes package redact knows.
const (
	fakeGitHub = "ghp_16C7e42F292c6912E7710c838347Ae178B4a"
	fakeOpenAI = "sk-proj-Ab12Cd34Ef56Gh78Ij90Kl12Mn34Op56_Qr78-St90"
)

// TestValueRedactionStored records a call whose arguments, response, error
// and server log line hold credentials under harmless names, reads them
// back from the SQLite file, then turns value redaction off.
func TestValueRedactionStored(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, testOptions())
	add := func(i int) {
		c := call(i, "gh", "create_issue", `{"repo":"a/b","body":"use `+fakeGitHub+` here","headers":["Bearer `+fakeOpenAI+`"]}`)
		c.Response = json.RawMessage(`{"content":[{"type":"text","text":"key is ` + fakeOpenAI + `"}]}`)
		c.Outcome, c.Error = record.OutcomeToolError, "auth failed for "+fakeGitHub
		s.RecordCall(c)
		s.Observe(record.Event{Time: t0, Server: "gh", Kind: record.EventLog, Stream: "stderr",
			Message: "using token " + fakeGitHub})
	}
	add(1)
	flush(t, s)
	got := readBack(t, s)
	for _, text := range got {
		if strings.Contains(text, "ghp_") || strings.Contains(text, "sk-proj") {
			t.Errorf("a credential was stored: %s", text)
		}
	}
	wantArgs := `{"repo":"a/b","body":"use [redacted] here","headers":["Bearer [redacted]"]}`
	if got[0] != wantArgs {
		t.Errorf("arguments = %s\nwant %s", got[0], wantArgs)
	}
	if want := `{"content":[{"type":"text","text":"key is [redacted]"}]}`; got[1] != want {
		t.Errorf("preview = %s\nwant %s", got[1], want)
	}
	if want := "auth failed for [redacted]"; got[2] != want {
		t.Errorf("error = %q, want %q", got[2], want)
	}
	if want := "using token [redacted]"; got[3] != want {
		t.Errorf("log line = %q, want %q", got[3], want)
	}

	// Off: values are kept; fields named like secrets are still redacted.
	s.SetKeepSecretValues(true)
	c := call(2, "gh", "create_issue", `{"body":"`+fakeGitHub+`","token":"`+fakeOpenAI+`"}`)
	s.RecordCall(c)
	flush(t, s)
	page, err := s.Calls(ctx, CallQuery{Server: "gh"})
	if err != nil {
		t.Fatal(err)
	}
	full, err := s.Call(ctx, page.Calls[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"body":"` + fakeGitHub + `","token":"[redacted]"}`; string(full.Arguments) != want {
		t.Errorf("with value redaction off, arguments = %s\nwant %s", full.Arguments, want)
	}
}

// readBack returns the arguments, preview and error of the newest call and
// the text of the newest log line of server gh.
func readBack(t *testing.T, s *Store) []string {
	t.Helper()
	ctx := context.Background()
	page, err := s.Calls(ctx, CallQuery{Server: "gh"})
	if err != nil || len(page.Calls) == 0 {
		t.Fatalf("Calls = %+v, %v", page, err)
	}
	full, err := s.Call(ctx, page.Calls[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	logs, err := s.Logs(ctx, "gh", t0.Add(-1), 1)
	if err != nil || len(logs) != 1 {
		t.Fatalf("Logs = %+v, %v", logs, err)
	}
	return []string{string(full.Arguments), full.ResponsePreview, full.Error, logs[0].Text}
}

func TestPreviewRedactsLargeResponses(t *testing.T) {
	// Too large to parse: the raw text is searched, past the cut.
	big := `{"content":[{"type":"text","text":"` + strings.Repeat("x", 2000) + " " + fakeGitHub + strings.Repeat("y", previewLimitForRedaction) + `"}]}`
	got := preparePreview(json.RawMessage(big), 2048, true)
	if strings.Contains(got, "ghp_") || strings.Contains(got, "16C7e42F") {
		t.Errorf("preview keeps the start of a credential: ...%s", got[len(got)-20:])
	}
	if !strings.HasSuffix(got, "[redac") && !strings.HasSuffix(got, "[redacted]") {
		t.Errorf("preview does not end in the redaction: ...%s", got[len(got)-20:])
	}
	if kept := preparePreview(json.RawMessage(big), 2048, false); !strings.Contains(kept, "ghp_") {
		t.Errorf("value redaction off, preview lost the value: ...%s", kept[len(kept)-20:])
	}
}
