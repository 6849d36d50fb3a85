package daemon

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// serveLimited serves h with limits on a loopback port and returns its
// address.
func serveLimited(t *testing.T, limits HTTPLimits, h http.Handler) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	limits = limits.withDefaults()
	srv := limits.server(h)
	done := make(chan struct{})
	go func() { defer close(done); _ = srv.Serve(limitListener(ln, limits.MaxConns)) }()
	t.Cleanup(func() { srv.Close(); <-done })
	return ln.Addr().String()
}

// A request whose body is read in time runs as long as it needs past
// ReadTimeout (a stream, a long call): its context is not cancelled. A
// request that does not finish its body is closed at ReadTimeout.
func TestReadTimeoutSparesReadRequests(t *testing.T) {
	const timeout = 300 * time.Millisecond
	addr := serveLimited(t, HTTPLimits{ReadTimeout: timeout}, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.ReadAll(r.Body)
		select {
		case <-time.After(3 * timeout):
			_, _ = io.WriteString(w, "done")
		case <-r.Context().Done():
			w.WriteHeader(http.StatusServiceUnavailable)
		}
	}))
	for _, body := range []string{"", `{"a":1}`} {
		resp, err := http.Post("http://"+addr+"/", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		data, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if string(data) != "done" {
			t.Errorf("body %q: %d %q: the handler's context was cancelled by the read deadline", body, resp.StatusCode, data)
		}
	}

	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 100\r\n\r\nx")
	start := time.Now()
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	_, _ = io.Copy(io.Discard, bufio.NewReader(c))
	if d := time.Since(start); d > timeout+time.Second {
		t.Errorf("a connection that stopped sending its body stayed open %s", d)
	}
}

// No more than MaxConns connections are served at once; the next waits
// until one closes.
func TestMaxConns(t *testing.T) {
	addr := serveLimited(t, HTTPLimits{MaxConns: 2, ReadTimeout: 10 * time.Second}, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "ok")
	}))
	var held []net.Conn
	for range 2 {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		held = append(held, c)
	}
	third, err := net.Dial("tcp", addr) // the kernel queues it
	if err != nil {
		t.Fatal(err)
	}
	defer third.Close()
	fmt.Fprintf(third, "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
	_ = third.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
	if n, err := third.Read(make([]byte, 1)); n != 0 || err == nil {
		t.Fatalf("a third connection was served while two were open: %d %v", n, err)
	}
	held[0].Close()
	_ = third.SetReadDeadline(time.Now().Add(5 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(third), nil)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("the third connection once one closed: %v %v", resp, err)
	}
	resp.Body.Close()
}
