package history

import (
	"bufio"
	"context"
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/app/record"
)

// crashWriterEnv makes the test binary a writer that records calls as fast
// as it can into the database at its value, and prints "committed ID" after
// every batch that is durably committed, until it is killed.
const crashWriterEnv = "SWITCHBOARD_HISTORY_CRASH_WRITER"

func runCrashWriter(path string) {
	out := bufio.NewWriter(os.Stdout)
	s, err := Open(context.Background(), path, Options{RetentionInterval: -1, BatchDelay: 5 * time.Millisecond, BatchSize: 64,
		OnCommit: func(calls []Call, _ uint64) {
			fmt.Fprintf(out, "committed %d %d\n", calls[len(calls)-1].ID, len(calls))
			out.Flush()
		}})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	for i := 0; ; i++ {
		c := record.Call{Start: time.Now(), Duration: time.Millisecond, Server: "crash", Method: "tools/call",
			Name: "write_file", Outcome: record.OutcomeOK, ClientName: "crash-test", ResponseSize: 10,
			Arguments: []byte(fmt.Sprintf(`{"seq":%d,"text":"marker%d heavy write"}`, i, i))}
		s.RecordCall(c)
		if i%256 == 255 {
			time.Sleep(time.Millisecond) // let the writer commit; the queue is never the limit here
		}
	}
}

// TestKill9DuringHeavyWrites kills (SIGKILL) a process in the middle of
// heavy writes, reopens its database, and finds it intact and holding every
// batch whose commit the writer saw before the kill.
func TestKill9DuringHeavyWrites(t *testing.T) {
	path := filepath.Join(t.TempDir(), "history.db")
	for round := range 3 {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), crashWriterEnv+"="+path)
		cmd.Stderr = os.Stderr
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(stdout)
		var lastID int64
		batches := 0
		deadline := time.Now().Add(30 * time.Second)
		for sc.Scan() && batches < 20+round*10 && time.Now().Before(deadline) {
			f := strings.Fields(sc.Text())
			if len(f) == 3 && f[0] == "committed" {
				lastID, _ = strconv.ParseInt(f[1], 10, 64)
				batches++
			}
		}
		if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		_ = cmd.Wait()
		// Lines written before the kill but not read yet: their batches
		// were committed too.
		for sc.Scan() {
			if f := strings.Fields(sc.Text()); len(f) == 3 && f[0] == "committed" {
				lastID, _ = strconv.ParseInt(f[1], 10, 64)
			}
		}
		if batches < 5 {
			t.Fatalf("round %d: only %d batches committed before the kill", round, batches)
		}

		s, err := Open(context.Background(), path, Options{RetentionInterval: -1})
		if err != nil {
			t.Fatalf("round %d: reopening after kill -9: %v", round, err)
		}
		if r := s.Recovered(); r != nil {
			t.Fatalf("round %d: the database was found damaged after kill -9: %v", round, r)
		}
		var check string
		if err := s.rdb().QueryRow("PRAGMA integrity_check").Scan(&check); err != nil || check != "ok" {
			t.Fatalf("round %d: integrity_check = %q, %v", round, check, err)
		}
		// Every call up to the last committed one is there, with no gap
		// (ids are given in order by the one writer), and searchable.
		var n, maxID int64
		if err := s.rdb().QueryRow("SELECT count(*), coalesce(max(id), 0) FROM calls WHERE id <= ?", lastID).Scan(&n, &maxID); err != nil {
			t.Fatal(err)
		}
		if n != lastID || maxID != lastID {
			t.Fatalf("round %d: %d calls with id <= %d (max %d), want all %d committed", round, n, lastID, maxID, lastID)
		}
		page, err := s.Calls(context.Background(), CallQuery{Text: "heavy", Limit: 5})
		if err != nil || len(page.Calls) == 0 {
			t.Fatalf("round %d: free-text search after the kill: %v %+v", round, err, page)
		}
		var indexed int64
		if err := s.rdb().QueryRow("SELECT count(*) FROM calls_fts WHERE calls_fts MATCH 'heavy'").Scan(&indexed); err != nil && err != sql.ErrNoRows {
			t.Fatal(err)
		}
		var total int64
		s.rdb().QueryRow("SELECT count(*) FROM calls").Scan(&total)
		if indexed != total {
			t.Errorf("round %d: %d calls, %d in the search index", round, total, indexed)
		}
		t.Logf("round %d: killed after %d batches; %d calls stored, the last acknowledged was %d", round, batches, total, lastID)
		if err := s.Close(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
}
