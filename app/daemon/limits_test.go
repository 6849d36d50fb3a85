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

	"github.com/switchboardhq/switchboard/app/internal/conntrust"
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

// No more than MaxConns connections are served at once. When they are
// taken, a new connection is served in place of the oldest that never
// presented a valid token, which is closed; when every one did, the new
// one waits until one closes. (The handler trusts a connection as the
// API's authentication does, for a request with the token.)
func TestMaxConns(t *testing.T) {
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") == "Bearer good" {
			conntrust.Trust(r.Context())
		}
		_, _ = io.WriteString(w, "ok")
	})
	for _, tt := range []struct {
		name string
		held []string // what each held connection sent: "trusted", "untrusted" (a request without the token), "nothing"
		shed int      // the held connection closed for the new one, -1 for none: the new one waits
	}{
		{"every one trusted: the new one waits", []string{"trusted", "trusted", "trusted"}, -1},
		{"the oldest untrusted is shed", []string{"trusted", "untrusted", "nothing"}, 1},
		{"a connection that sent nothing is shed", []string{"nothing", "trusted", "untrusted"}, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			addr := serveLimited(t, HTTPLimits{MaxConns: len(tt.held), ReadTimeout: 10 * time.Second}, handler)
			var held []*bufio.Reader
			var conns []net.Conn
			for _, what := range tt.held {
				c, err := net.Dial("tcp", addr)
				if err != nil {
					t.Fatal(err)
				}
				defer c.Close()
				br := bufio.NewReader(c)
				switch what {
				case "trusted":
					get(t, c, br, "Bearer good")
				case "untrusted":
					get(t, c, br, "")
				}
				conns, held = append(conns, c), append(held, br)
			}
			next, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			defer next.Close()
			fmt.Fprintf(next, "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
			if tt.shed < 0 {
				_ = next.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
				if n, err := next.Read(make([]byte, 1)); n != 0 || err == nil {
					t.Fatalf("a fourth connection was served while three trusted ones were open: %d %v", n, err)
				}
				conns[0].Close()
			}
			_ = next.SetReadDeadline(time.Now().Add(5 * time.Second))
			resp, err := http.ReadResponse(bufio.NewReader(next), nil)
			if err != nil || resp.StatusCode != 200 {
				t.Fatalf("the new connection: %v %v", resp, err)
			}
			resp.Body.Close()
			for i, br := range held {
				if i == tt.shed {
					_ = conns[i].SetReadDeadline(time.Now().Add(5 * time.Second))
					if n, err := br.Read(make([]byte, 1)); n != 0 || err == nil {
						t.Errorf("held connection %d (%s) was not shed: %d %v", i, tt.held[i], n, err)
					}
					continue
				}
				if tt.shed < 0 && i == 0 {
					continue // closed by the test
				}
				get(t, conns[i], br, "") // still served
			}
		})
	}
}

// get sends a GET on c, with the Authorization header auth unless empty,
// and reads its answer from br.
func get(t *testing.T, c net.Conn, br *bufio.Reader, auth string) {
	t.Helper()
	req := "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n"
	if auth != "" {
		req += "Authorization: " + auth + "\r\n"
	}
	fmt.Fprint(c, req+"\r\n")
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	resp, err := http.ReadResponse(br, nil)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("GET: %v %v", resp, err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
}
