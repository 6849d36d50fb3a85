package gateway

import (
	"bufio"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// TestKeepAliveCommentsOnSilentStreams: a silent SSE response gets
// ": keep-alive" comments until the handler writes again; a JSON response
// never does.
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
	srv := httptest.NewServer(keepAlive(inner, 30*time.Millisecond, nil))
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
