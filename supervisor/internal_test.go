package supervisor

import (
	"context"
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
)

func TestStdoutFilter(t *testing.T) {
	long := "{" + strings.Repeat("x", 200<<10) + "}\n"
	tests := []struct {
		name     string
		in       string
		wantOut  string
		wantJunk []string
	}{
		{"protocol only", "{\"a\":1}\n[1]\n", "{\"a\":1}\n[1]\n", nil},
		{"banner before protocol", "Server starting...\n{\"a\":1}\n", "{\"a\":1}\n", []string{"Server starting..."}},
		{"junk between frames", "{}\nWARN: x\r\n{}\n", "{}\n{}\n", []string{"WARN: x"}},
		{"blank lines and indentation", "\n\n  {}\n", "{}\n", nil},
		{"frame larger than the buffer", long, long, nil},
		{"junk at end without newline", "{}\nbye", "{}\n", []string{"bye"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var junk []string
			f := newStdoutFilter(io.NopCloser(strings.NewReader(tt.in)), func(l string) { junk = append(junk, l) })
			out, err := io.ReadAll(iotest{f, 7}) // small reads exercise the frame splitting
			if err != nil {
				t.Fatal(err)
			}
			if string(out) != tt.wantOut {
				t.Errorf("output differs: got %d bytes, want %d", len(out), len(tt.wantOut))
			}
			if diff := cmp.Diff(tt.wantJunk, junk); diff != "" {
				t.Errorf("junk lines (-want +got):\n%s", diff)
			}
		})
	}
}

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
