package supervisor

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// TestLineReader feeds the stdout framing every shape real servers print:
// only complete JSON-RPC 2.0 messages reach the protocol; the rest is
// output, kept for the log.
func TestLineReader(t *testing.T) {
	const req = `{"jsonrpc":"2.0","id":1,"method":"ping"}`
	const resp = `{"jsonrpc":"2.0","id":7,"result":{}}`
	const note = `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}}`
	long := `{"jsonrpc":"2.0","id":2,"result":{"text":"` + strings.Repeat("x", 200<<10) + `"}}`
	tests := []struct {
		name     string
		in       string
		max      int
		wantMsgs int
		wantJunk []string
	}{
		{"protocol only", req + "\n" + resp + "\n" + note + "\n", 0, 3, nil},
		{"batch", "[" + req + "," + note + "]\n", 0, 2, nil},
		{"banner before protocol", "Server starting...\n" + resp + "\n", 0, 1, []string{"Server starting..."}},
		{"log line in brackets", "[INFO] server started\n" + resp + "\n", 0, 1, []string{"[INFO] server started"}},
		{"JSON that is not JSON-RPC", `{"foo":1}` + "\n" + resp + "\n", 0, 1, []string{`{"foo":1}`}},
		{"an array of numbers", "[1,2,3]\n" + resp + "\n", 0, 1, []string{"[1,2,3]"}},
		{"empty batch", "[]\n", 0, 0, []string{"[]"}},
		{"batch with a non-message", "[" + req + ",1]\n", 0, 0, []string{"[" + req + ",1]"}},
		{"node console.log", "{ a: 1 }\n" + resp + "\n", 0, 1, []string{"{ a: 1 }"}},
		{"python print", "{'a': 1}\n" + resp + "\n", 0, 1, []string{"{'a': 1}"}},
		{"pretty-printed JSON", "{\n  \"jsonrpc\": \"2.0\",\n  \"id\": 1\n}\n" + resp + "\n", 0, 1,
			[]string{"{", `"jsonrpc": "2.0",`, `"id": 1`, "}"}},
		{"truncated message", `{"jsonrpc":"2.0","id":` + "\n" + resp + "\n", 0, 1, []string{`{"jsonrpc":"2.0","id":`}},
		{"truncated response", `{"jsonrpc":"2.0","id":4,"result":{"content":[` + "\n" + resp + "\n", 0, 2,
			[]string{`{"jsonrpc":"2.0","id":4,"result":{"content":[`}},
		{"wrong version", `{"jsonrpc":"1.0","id":1,"result":{}}` + "\n", 0, 0, []string{`{"jsonrpc":"1.0","id":1,"result":{}}`}},
		{"response without result or error", `{"jsonrpc":"2.0","id":1}` + "\n", 0, 0, []string{`{"jsonrpc":"2.0","id":1}`}},
		{"trailing text after a message", resp + " ok\n", 0, 1, []string{resp + " ok"}},
		{"junk between frames", resp + "\nWARN: x\r\n" + resp + "\n", 0, 2, []string{"WARN: x"}},
		{"blank lines and indentation", "\n\n  " + resp + "\n", 0, 1, nil},
		{"message larger than the buffer", long + "\n", 0, 1, nil},
		{"message without a final newline", resp, 0, 1, nil},
		{"junk at end without newline", resp + "\nbye", 0, 1, []string{"bye"}},
		{"line over the limit is cut", long + "\n" + resp + "\n", 100 << 10, 2,
			[]string{long[:maxJunkLine] + "… (line cut: longer than the 102400-byte message limit)"}},
		{"line over the limit ending in the buffer", `{"jsonrpc":"2.0","id":3,"result":"` + strings.Repeat("y", 300) + "\"}\n" + resp + "\n", 100, 2,
			[]string{`{"jsonrpc":"2.0","id":3,"result":"` + strings.Repeat("y", 100-len(`{"jsonrpc":"2.0","id":3,"result":"`)) + "… (line cut: longer than the 100-byte message limit)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var junk []string
			max := tt.max
			if max == 0 {
				max = DefaultMaxMessageSize
			}
			tr := &stdioTransport{stdout: io.NopCloser(iotest{strings.NewReader(tt.in), 7}), stdin: nopWriteCloser{},
				maxMessage: max, onJunk: func(l string) { junk = append(junk, l) }}
			conn, err := tr.Connect(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			var got int
			for {
				_, err := conn.Read(t.Context())
				if err == io.EOF {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				got++
			}
			if got != tt.wantMsgs {
				t.Errorf("got %d messages, want %d", got, tt.wantMsgs)
			}
			if diff := cmp.Diff(tt.wantJunk, junk); diff != "" {
				t.Errorf("output lines (-want +got):\n%s", diff)
			}
		})
	}
}

type nopWriteCloser struct{}

func (nopWriteCloser) Write(p []byte) (int, error) { return len(p), nil }
func (nopWriteCloser) Close() error                { return nil }

// iotest reads through r in chunks of at most n bytes.
type iotest struct {
	r io.Reader
	n int
}

func (t iotest) Read(p []byte) (int, error) { return t.r.Read(p[:min(len(p), t.n)]) }

func TestReaperCommands(t *testing.T) {
	in := "+100\n+200\n-100\n+300\nbogus\n+1\n-999\n+x\n"
	got := readReaperCommands(strings.NewReader(in))
	want := map[int]struct{}{200: {}, 300: {}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("groups (-want +got):\n%s", diff)
	}
}

func TestLogRing(t *testing.T) {
	r := newLogRing(3)
	for i, text := range []string{"a", "b", "c", "d"} {
		r.add(LogLine{PID: 1 + i%2, Text: text})
	}
	texts := func(ls []LogLine) (out []string) {
		for _, l := range ls {
			out = append(out, l.Text)
		}
		return out
	}
	if got := texts(r.snapshot(0, 0)); !slices.Equal(got, []string{"b", "c", "d"}) {
		t.Errorf("all = %v", got)
	}
	if got := texts(r.snapshot(2, 0)); !slices.Equal(got, []string{"b", "d"}) {
		t.Errorf("pid 2 = %v", got)
	}
	if got := texts(r.snapshot(0, 1)); !slices.Equal(got, []string{"d"}) {
		t.Errorf("last 1 = %v", got)
	}
}

func TestMergePATH(t *testing.T) {
	sep := string(filepath.ListSeparator)
	got := MergePATH(strings.Join([]string{"/nvm/bin", "/usr/bin"}, sep), strings.Join([]string{"/usr/bin", "/bin", ""}, sep))
	if want := strings.Join([]string{"/nvm/bin", "/usr/bin", "/bin"}, sep); got != want {
		t.Errorf("MergePATH = %q, want %q", got, want)
	}
}

// TestRegistrySweep records a process group as an earlier daemon would, and
// checks that the next start stops it, while an entry whose pid now belongs
// to a process with another start time is left alone.
func TestRegistrySweep(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the sweep is checked on Linux, where /proc shows zombies")
	}
	dir := t.TempDir()
	sleeper := exec.Command("sleep", "60")
	prepareGroup(sleeper)
	clearDeathSignal(sleeper)
	if err := sleeper.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { sleeper.Wait(); close(exited) }()
	t.Cleanup(func() { sleeper.Process.Kill(); <-exited })

	bystander := exec.Command("sleep", "60")
	if err := bystander.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { bystander.Process.Kill(); bystander.Wait() })

	ctx := context.Background()
	started, err := processStartTime(ctx, sleeper.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	bystanderStarted, err := processStartTime(ctx, bystander.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	reg := newRegistry(filepath.Join(dir, RegistryFile))
	for _, e := range []registryEntry{
		{PID: sleeper.Process.Pid, Group: sleeper.Process.Pid, Started: started, Server: "leftover"},
		// Same pid as a live process but another start time: a reused pid.
		{PID: bystander.Process.Pid, Group: bystander.Process.Pid, Started: bystanderStarted - 5000, Server: "reused"},
	} {
		if err := reg.add(e); err != nil {
			t.Fatal(err)
		}
	}

	swept, err := newRegistry(reg.path).sweep(ctx, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]SweptProcess{{PID: sleeper.Process.Pid, Server: "leftover"}}, swept); diff != "" {
		t.Errorf("swept (-want +got):\n%s", diff)
	}
	if !waitFor(exited, 5*time.Second) {
		t.Error("the leftover process survived the sweep")
	}
	if err := bystander.Process.Signal(syscallZero()); err != nil {
		t.Errorf("a process whose pid was merely reused was touched: %v", err)
	}
	data, err := os.ReadFile(reg.path)
	if err != nil || strings.TrimSpace(string(data)) != "[]" {
		t.Errorf("registry after sweep = %q, %v; want empty", data, err)
	}
}

// TestFailedResponse: a response cut at the message limit, or broken,
// still fails its call when its id comes before its result.
func TestFailedResponse(t *testing.T) {
	tests := []struct {
		prefix string
		wantID any // nil: no stand-in response
	}{
		{`{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"xxxx`, int64(7)},
		{`{"jsonrpc":"2.0","id":"a-1","error":{"code":1,"message":"xxxx`, "a-1"},
		{`{"result":{"content":"xxxx`, nil},
		{`{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"xxxx`, nil},
		{`{"jsonrpc":"1.0","id":7,"result":"xxxx`, nil},
		{`{"id":`, nil},
	}
	for _, tt := range tests {
		resp := failedResponse([]byte(tt.prefix), "longer than the 100-byte message limit")
		switch {
		case tt.wantID == nil && resp != nil:
			t.Errorf("%s: got a stand-in response for id %v", tt.prefix, resp.ID.Raw())
		case tt.wantID != nil && (resp == nil || resp.ID.Raw() != tt.wantID || resp.Error == nil ||
			!strings.Contains(resp.Error.Error(), "longer than the 100-byte message limit")):
			t.Errorf("%s: got %+v, want an error response for id %v", tt.prefix, resp, tt.wantID)
		}
	}
}

// TestLineTap: a tap sees each line that may be a message as it is read,
// in order, and a line it takes never reaches Read; output lines never
// reach it.
func TestLineTap(t *testing.T) {
	const taken = `{"jsonrpc":"2.0","id":7,"result":{}}`
	const left = `{"jsonrpc":"2.0","id":8,"result":{}}`
	const note = `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}}`
	stdout, w := io.Pipe()
	tr := &stdioTransport{stdout: stdout, stdin: nopWriteCloser{}, maxMessage: DefaultMaxMessageSize, onJunk: func(string) {}}
	conn, err := tr.Connect(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	var seen []string
	conn.(LineTapper).SetLineTap(func(line []byte) bool {
		seen = append(seen, strings.TrimSpace(string(line)))
		return strings.Contains(string(line), `"id":7`)
	})
	go func() {
		io.WriteString(w, "banner\n"+taken+"\n"+left+"\n"+note+"\n")
		w.Close()
	}()
	var read []string
	for {
		msg, err := conn.Read(t.Context())
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		switch m := msg.(type) {
		case *jsonrpc.Response:
			read = append(read, "response "+fmt.Sprint(m.ID.Raw()))
		case *jsonrpc.Request:
			read = append(read, m.Method)
		}
	}
	// Read returned EOF after the read loop saw every line: seen is final.
	if diff := cmp.Diff([]string{taken, left, note}, seen); diff != "" {
		t.Errorf("the tap saw (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"response 8", "notifications/message"}, read); diff != "" {
		t.Errorf("Read returned (-want +got):\n%s", diff)
	}
}
