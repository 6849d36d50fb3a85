package gateway_test

import (
	"bytes"
	"net/http"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/app/internal/testutil"
)

// maxEchoCallAllocation is the limit on the bytes the gateway allocates
// per echo tools/call (fast path on, calls recorded): the CI guard below
// fails past it. Issue 18's target was 16 KiB; measured 6.8 KiB (102 to
// 103 objects; 9.6 KiB under -race) once checkRequest scanned the
// JSON-RPC envelope instead of decoding it (issue 33), so 12 KiB (room
// for Windows, where the daemon measured 3.8 KiB more per call). Raise
// it only with a reason written here.
const maxEchoCallAllocation = 12 << 10

// raceAllocationAllowance is added to the limit when the tests run with
// -race (as make test does): the race detector's sync.Pool drops a quarter
// of the objects put back, so pooled buffers are allocated again. Measured
// on the go-sdk path (fast path off or absent): 304.1 KiB per call with
// -race against 300.1 KiB without; on the fast path's first version: 9.9 to
// 10.2 KiB against 7.3 KiB.
const raceAllocationAllowance = 4 << 10

// guardCalls is how many calls the guard measures, after guardWarmup.
const (
	guardWarmup = 200
	guardCalls  = 1500
)

// TestEchoCallAllocations is the CI guard on what the gateway allocates
// per tools/call: bytes allocated, unlike time, hardly move when other
// work shares the machine. The gateway runs in a process of its own, as in
// the benchmark, so that its counters (runtime/metrics, read through
// benchStatsPath) hold nothing of the client's: one pooled process of the
// minimal echo server behind it, and a Recorder that counts the calls, so
// that the gateway builds every record. The client is raw HTTP on one
// session.
func TestEchoCallAllocations(t *testing.T) {
	client := newBenchHTTPClient()
	t.Cleanup(client.CloseIdleConnections)
	gw := startBenchGateway(t, client, "guard", fastPathEnv+"=", benchRecorderEnv+"=count")
	var scratch bytes.Buffer
	s, err := openHTTPSession(client, gw.endpoint(), "", &scratch)
	if err != nil {
		t.Fatal(err)
	}
	defer s.close()
	var buf []byte
	echo := echoCall()
	id := int64(10)
	calls := func(n int) {
		t.Helper()
		for range n {
			id++
			var result []byte
			var err error
			if buf, result, err = s.request(buf, &scratch, id, "tools/call", echo.params); err != nil {
				t.Fatal(err)
			}
			if err := echo.check(result); err != nil {
				t.Fatal(err)
			}
		}
	}
	calls(guardWarmup)
	before := guardStats(t, client, gw.url)
	calls(guardCalls)
	after := guardStats(t, client, gw.url)

	limit, why := maxEchoCallAllocation, "maxEchoCallAllocation (issue 18)"
	if raceBuild {
		limit += raceAllocationAllowance
		why += " + raceAllocationAllowance (-race)"
	}
	perCall := float64(after.bytes-before.bytes) / guardCalls
	t.Logf("the gateway allocated %.1f KiB (%.0f objects) per echo call over %d calls; limit %.1f KiB",
		perCall/1024, float64(after.objects-before.objects)/guardCalls, guardCalls, float64(limit)/1024)
	if perCall > float64(limit) {
		t.Errorf("the gateway allocates %.1f KiB per echo call, more than the %.1f KiB of %s; "+
			"profile it: SWITCHBOARD_BENCH_PROFILE=/tmp/p make bench-gateway, then "+
			"go tool pprof -sample_index=alloc_space -top /tmp/p/gateway-<pid>-heap.pprof",
			perCall/1024, float64(limit)/1024, why)
	}
	// The calls went through the gateway's recording, as every call does.
	testutil.Eventually(t, 10*time.Second, "every call recorded", func() bool {
		return guardStats(t, client, gw.url).recorded >= guardWarmup+guardCalls
	})
}

func guardStats(t *testing.T, client *http.Client, url string) benchStats {
	t.Helper()
	st, err := readBenchStats(client, url)
	if err != nil {
		t.Fatal(err)
	}
	return st
}
