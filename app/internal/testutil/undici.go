package testutil

import (
	"bytes"
	"context"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// An UndiciReport is what the gateway's Node harness's post.mjs prints of
// one POST sent through undici's fetch (what the TypeScript SDK uses).
type UndiciReport struct {
	Status         int    `json:"status"`
	ContentType    string `json:"contentType"`
	HeadersAfterMs int    `json:"headersAfterMs"`
	Body           string `json:"body"`
	TotalMs        int    `json:"totalMs"`
	// Error is set when undici gave up (its code: UND_ERR_HEADERS_TIMEOUT).
	Error *struct {
		Message string `json:"message"`
		Code    string `json:"code"`
		Cause   string `json:"cause"`
	} `json:"error"`
}

// UndiciPost sends one POST to url through undici's fetch with an Agent
// whose headersTimeout is headersTimeout, by running node on the
// harness's post.mjs (harness: the gateway's testdata/node, installed).
func UndiciPost(t testing.TB, ctx context.Context, node, harness, url string, headers map[string]string, body string, headersTimeout time.Duration) UndiciReport {
	t.Helper()
	req, err := json.Marshal(map[string]any{"url": url, "headers": headers, "body": body, "headersTimeoutMs": headersTimeout.Milliseconds()})
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(ctx, node, filepath.Join(harness, "post.mjs"), string(req))
	cmd.Dir = harness
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Run(); err != nil {
		t.Fatalf("post.mjs: %v\nstderr:\n%s", err, lastBytes(stderr.Bytes(), 4000))
	}
	var r UndiciReport
	if err := json.Unmarshal(stdout.Bytes(), &r); err != nil {
		t.Fatalf("post.mjs: the report is not JSON: %v\n%s", err, lastBytes(stdout.Bytes(), 4000))
	}
	return r
}

// lastBytes is the end of b, at most n bytes of it.
func lastBytes(b []byte, n int) []byte {
	if len(b) > n {
		return b[len(b)-n:]
	}
	return b
}
