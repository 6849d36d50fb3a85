package gateway

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// startWatch runs a streamWatch of interval until the test ends.
func startWatch(t *testing.T, interval time.Duration) *streamWatch {
	w := newStreamWatch(interval)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		w.run(ctx)
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	return w
}

// TestKeepAliveCommentsOnSilentStreams: a silent SSE response gets
// ": keep-alive" comments until the handler writes again; a JSON response
// of a request whose headers the watch may not send never does.
func TestKeepAliveCommentsOnSilentStreams(t *testing.T) {
	release := make(chan struct{})
	inner := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/json" {
			w.Header().Set("Content-Type", "application/json")
			<-release
			w.Write([]byte(`{"ok":true}`))
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		w.Write([]byte("event: message\ndata: {\"first\":true}\n\n"))
		w.(http.Flusher).Flush()
		<-release // a long call: nothing to say for a while
		w.Write([]byte("event: message\ndata: {\"last\":true}\n\n"))
	})
	srv := httptest.NewServer(keepAlive(inner, startWatch(t, 30*time.Millisecond), nil, nil))
	defer srv.Close()

	resp, err := http.Post(srv.URL+"/sse", "application/json", strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	lines := bufio.NewScanner(resp.Body)
	comments := 0
	for comments < 2 && lines.Scan() {
		if lines.Text() == ": keep-alive" {
			comments++
		}
	}
	close(release)
	var rest strings.Builder
	for lines.Scan() {
		rest.WriteString(lines.Text() + "\n")
	}
	if comments < 2 || !strings.Contains(rest.String(), `{"last":true}`) {
		t.Errorf("saw %d keep-alive comments, then %q", comments, rest.String())
	}

	release = make(chan struct{})
	done := make(chan string)
	go func() {
		resp, err := http.Post(srv.URL+"/json", "application/json", strings.NewReader("{}"))
		if err != nil {
			done <- err.Error()
			return
		}
		defer resp.Body.Close()
		var b strings.Builder
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			b.WriteString(sc.Text())
		}
		done <- b.String()
	}()
	time.Sleep(100 * time.Millisecond) // several keep-alive intervals pass with the JSON answer pending
	close(release)
	if got := <-done; got != `{"ok":true}` {
		t.Errorf("JSON response = %q, want it untouched", got)
	}
}

// TestKeepAliveOpensSilentCalls: a call whose handler writes nothing for
// longer than the interval gets, from the watch, the headers of an event
// stream and then comments, not before the interval; its answer then goes
// in that stream: an event stream as it is, a JSON answer with a status of
// its own (a 2026-07-28 era error) as the stream's one event. A call that
// answers within the interval is written as its handler wrote it.
func TestKeepAliveOpensSilentCalls(t *testing.T) {
	const interval = 200 * time.Millisecond
	release := make(chan struct{})
	inner := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/fast":
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte(`{"fast":true}`))
			return
		case "/sse":
			setStreamHeaders(w.Header()) // as the go-sdk: headers set, nothing written until the answer
			<-release
			w.Write([]byte("event: message\ndata: {\"last\":true}\n\n"))
			w.(http.Flusher).Flush()
		case "/error":
			<-release
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			w.Write([]byte(`{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"bad"}}`))
		}
	})
	srv := httptest.NewServer(keepAlive(inner, startWatch(t, interval), always, nil))
	defer srv.Close()

	resp, err := http.Post(srv.URL+"/fast", "application/json", strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.Header.Get("Content-Type") != "application/json" || resp.ContentLength != int64(len(body)) || string(body) != `{"fast":true}` {
		t.Errorf("fast answer: %s, length %d, %q; want it as written", resp.Header.Get("Content-Type"), resp.ContentLength, body)
	}

	for _, tc := range []struct{ path, want string }{
		{"/sse", "event: message\ndata: {\"last\":true}\n"},
		{"/error", "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":-32602,\"message\":\"bad\"}}\n"},
	} {
		t.Run(tc.path, func(t *testing.T) {
			release = make(chan struct{})
			start := time.Now()
			resp, err := http.Post(srv.URL+tc.path, "application/json", strings.NewReader("{}"))
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			if took := time.Since(start); took < interval {
				t.Errorf("headers after %s, before the interval %s", took, interval)
			}
			if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
				t.Fatalf("early headers: %d %s, want 200 text/event-stream", resp.StatusCode, resp.Header.Get("Content-Type"))
			}
			lines := bufio.NewScanner(resp.Body)
			if !lines.Scan() || lines.Text() != ": keep-alive" {
				t.Fatalf("first line %q, want a keep-alive comment", lines.Text())
			}
			close(release)
			var rest strings.Builder
			for lines.Scan() {
				if lines.Text() != ": keep-alive" && lines.Text() != "" {
					rest.WriteString(lines.Text() + "\n")
				}
			}
			if rest.String() != tc.want {
				t.Errorf("after the comments: %q, want %q", rest.String(), tc.want)
			}
		})
	}
}

// TestStreamWatchList: the watch's list holds exactly the calls in flight,
// whatever the order they end in.
func TestStreamWatchList(t *testing.T) {
	w := newStreamWatch(time.Hour)
	r := httptest.NewRequest(http.MethodPost, "/mcp", nil)
	var ks []*keepAliveWriter
	for range 4 {
		ks = append(ks, newKeepAliveWriter(httptest.NewRecorder(), r, w, true, nil))
	}
	count := func() int {
		n := 0
		for k := w.calls; k != nil; k = k.next {
			n++
		}
		return n
	}
	for i, k := range []*keepAliveWriter{ks[1], ks[3], ks[0], ks[2]} {
		k.stop()
		if got, want := count(), 3-i; got != want {
			t.Fatalf("after %d ended: %d calls watched, want %d", i+1, got, want)
		}
	}
	if get := newKeepAliveWriter(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/mcp", nil), w, true, nil); get.watch != nil || count() != 0 {
		t.Error("a GET is watched")
	}
}

// BenchmarkKeepAliveWriter is what watching costs a call: its writer made,
// linked into the watch's list and out (watched), or not watched at all;
// in parallel, for the list's one mutex.
//
//	go test -run '^$' -bench KeepAliveWriter ./app/gateway/
func BenchmarkKeepAliveWriter(b *testing.B) {
	r := httptest.NewRequest(http.MethodPost, "/mcp", nil)
	w := httptest.NewRecorder()
	for _, c := range []struct {
		name  string
		watch *streamWatch
	}{{"unwatched", nil}, {"watched", newStreamWatch(time.Hour)}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				newKeepAliveWriter(w, r, c.watch, true, nil).stop()
			}
		})
		b.Run(c.name+"/parallel", func(b *testing.B) {
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				w := httptest.NewRecorder()
				for pb.Next() {
					newKeepAliveWriter(w, r, c.watch, true, nil).stop()
				}
			})
		})
	}
}
