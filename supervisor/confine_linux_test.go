package supervisor_test

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/supervisor"
	"github.com/switchboardhq/switchboard/supervisor/confine"
	"github.com/switchboardhq/switchboard/supervisor/testmcp"
)

// hostileHome is a temp home with the secrets a compromised server would go
// for, and a folder granted to it.
type hostileHome struct {
	home, granted, tmp string
	secrets            []string // files the server must not read
}

func newHostileHome(t *testing.T) hostileHome {
	t.Helper()
	home := t.TempDir()
	h := hostileHome{home: home, granted: filepath.Join(home, "granted"), tmp: filepath.Join(home, "sbtmp")}
	for path, content := range map[string]string{
		".ssh/id_ed25519":                            "-----BEGIN OPENSSH PRIVATE KEY----- fake",
		".aws/credentials":                           "[default]\naws_secret_access_key = fake",
		".switchboard/tokens.json":                   `{"tokens":["fake"]}`,
		".switchboard/sandbox/other/data/notes.json": `{"other server": "data"}`,
		"granted/hello.txt":                          "hello from the granted folder",
	} {
		p := filepath.Join(home, path)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(path, "granted/") {
			h.secrets = append(h.secrets, p)
		}
	}
	if err := os.MkdirAll(h.tmp, 0o700); err != nil {
		t.Fatal(err)
	}
	slices.Sort(h.secrets) // not the map's order: .aws/credentials first
	return h
}

// hostilePolicy is the default policy's shape: the system, the server's own
// binary folder, a granted folder and a temp dir of its own.
func (h hostileHome) policy() *confine.Policy {
	return &confine.Policy{
		Read:  append(confine.SystemRead(), filepath.Dir(os.Args[0])),
		Write: []string{h.granted, h.tmp},
	}
}

func listen(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	return ln.Addr().String()
}

// TestConfinedHostileServer runs the hostile test server under a policy like
// the daemon's default and checks each thing it tries.
func TestConfinedHostileServer(t *testing.T) {
	h := newHostileHome(t)
	opts := fastOptions(t)
	opts.Launcher = []string{os.Args[0]}
	s := newSupervisor(t, opts)
	spec := testSpec("hostile", testmcp.Options{Hostile: true}, supervisor.PoolSpec{})
	spec.Env["HOME"] = h.home
	spec.Env["TMPDIR"] = h.tmp
	spec.Confine = h.policy()
	apply(t, s, spec)
	ctx := t.Context()
	if _, _, err := call(ctx, s, "hostile", "echo", map[string]any{"text": "up"}); err != nil {
		t.Fatalf("the confined server does not answer: %v", err)
	}
	st, err := s.Status("hostile")
	if err != nil {
		t.Fatal(err)
	}
	if st.Confinement == nil || !st.Confinement.Enforced || !strings.HasPrefix(st.Confinement.Mechanism, "landlock ABI ") {
		t.Fatalf("confinement = %+v, want enforced by landlock", st.Confinement)
	}
	if st.Confine == nil || !slices.Equal(st.Confine.Write, spec.Confine.Write) {
		t.Fatalf("status policy = %+v, want the spec's writes", st.Confine)
	}
	for _, r := range spec.Confine.Read {
		if !slices.Contains(st.Confine.Read, r) {
			t.Errorf("status policy reads %v, without the spec's %s", st.Confine.Read, r)
		}
	}

	refused := func(tool string, args map[string]any) func(t *testing.T) {
		return func(t *testing.T) {
			res, _, err := call(ctx, s, "hostile", tool, args)
			if err == nil {
				t.Fatalf("%s %v succeeded (%s); want it refused", tool, args, text(res))
			}
			// Landlock answers EACCES, the socket filter EPERM.
			if !strings.Contains(err.Error(), "permission denied") && !strings.Contains(err.Error(), "operation not permitted") {
				t.Fatalf("%s %v: %v; want permission denied or operation not permitted", tool, args, err)
			}
		}
	}
	allowed := func(tool string, args map[string]any, want string) func(t *testing.T) {
		return func(t *testing.T) {
			res, _, err := call(ctx, s, "hostile", tool, args)
			if err != nil {
				t.Fatalf("%s %v: %v; want it allowed", tool, args, err)
			}
			if !strings.Contains(text(res), want) {
				t.Fatalf("%s %v = %q, want %q in it", tool, args, text(res), want)
			}
		}
	}
	for _, secret := range h.secrets {
		rel, _ := filepath.Rel(h.home, secret)
		t.Run("read "+rel+" refused", refused("read_file", map[string]any{"path": secret}))
	}
	link := filepath.Join(h.granted, "key-link")
	if err := os.Symlink(filepath.Join(h.home, ".ssh", "id_ed25519"), link); err != nil {
		t.Fatal(err)
	}
	t.Run("read a secret through a symlink in the granted folder refused", refused("read_file", map[string]any{"path": link}))
	t.Run("write in home refused", refused("write_file", map[string]any{"path": filepath.Join(h.home, "planted.sh"), "content": "x"}))
	t.Run("write ~/.bashrc refused", refused("write_file", map[string]any{"path": filepath.Join(h.home, ".bashrc"), "content": "x"}))
	t.Run("write /tmp refused", refused("write_file", map[string]any{"path": filepath.Join(os.TempDir(), "sb-hostile-planted"), "content": "x"}))
	t.Run("connect to the daemon's port refused", refused("connect", map[string]any{"addr": listen(t)}))
	t.Run("connect to another loopback port refused", refused("connect", map[string]any{"addr": listen(t)}))
	t.Run("udp send refused", refused("udp_send", map[string]any{"addr": "127.0.0.1:53"}))
	t.Run("read granted allowed", allowed("read_file", map[string]any{"path": filepath.Join(h.granted, "hello.txt")}, "hello from the granted folder"))
	t.Run("write granted allowed", allowed("write_file", map[string]any{"path": filepath.Join(h.granted, "new.txt"), "content": "x"}, "ok"))
	t.Run("write own tmp allowed", allowed("write_file", map[string]any{"path": filepath.Join(h.tmp, "scratch"), "content": "x"}, "ok"))
	t.Run("read system certificates allowed", allowed("read_file", map[string]any{"path": "/etc/hosts"}, ""))
}

// TestConfinedServerWithNetwork: network lets TCP through (Landlock cannot
// refuse one port while granting the rest) and UDP, and nothing of the
// filesystem.
func TestConfinedServerWithNetwork(t *testing.T) {
	h := newHostileHome(t)
	opts := fastOptions(t)
	opts.Launcher = []string{os.Args[0]}
	s := newSupervisor(t, opts)
	spec := testSpec("net", testmcp.Options{Hostile: true}, supervisor.PoolSpec{})
	daemonAddr := listen(t)
	_, port, _ := net.SplitHostPort(daemonAddr)
	daemonPort, _ := strconv.Atoi(port)
	spec.Confine = h.policy()
	spec.Confine.Network = true
	spec.Confine.DenyPorts = []uint16{uint16(daemonPort)}
	apply(t, s, spec)
	ctx := t.Context()
	if _, _, err := call(ctx, s, "net", "connect", map[string]any{"addr": listen(t)}); err != nil {
		t.Errorf("connect with network: %v", err)
	}
	if _, _, err := call(ctx, s, "net", "connect", map[string]any{"addr": daemonAddr}); err == nil || !strings.Contains(err.Error(), "permission denied") {
		t.Errorf("connect to the denied port with network: %v; want permission denied", err)
	}
	if _, _, err := call(ctx, s, "net", "udp_send", map[string]any{"addr": "127.0.0.1:9"}); err != nil {
		t.Errorf("udp send with network: %v", err)
	}
	if _, _, err := call(ctx, s, "net", "read_file", map[string]any{"path": h.secrets[0]}); err == nil || !strings.Contains(err.Error(), "permission denied") {
		t.Errorf("read of a secret with network: %v; want permission denied", err)
	}
	if st, err := s.Status("net"); err != nil || st.Confinement == nil || !st.Confinement.Enforced || len(st.Confinement.Missing) > 0 {
		t.Errorf("confinement = %+v (%v); want enforced in full", st.Confinement, err)
	}
}

// TestConfinementUnavailable: a kernel without Landlock (simulated by
// confine.ABIEnv=0) runs the server unconfined and the status says why.
func TestConfinementUnavailable(t *testing.T) {
	t.Setenv(confine.ABIEnv, "0")
	h := newHostileHome(t)
	opts := fastOptions(t)
	opts.Launcher = []string{os.Args[0]}
	s := newSupervisor(t, opts)
	spec := testSpec("bare", testmcp.Options{Hostile: true}, supervisor.PoolSpec{})
	spec.Confine = h.policy()
	apply(t, s, spec)
	res, _, err := call(t.Context(), s, "bare", "read_file", map[string]any{"path": h.secrets[0]})
	if err != nil {
		t.Fatalf("unconfined read: %v", err)
	}
	if !strings.Contains(text(res), "fake") {
		t.Fatalf("read = %q", text(res))
	}
	st, err := s.Status("bare")
	if err != nil {
		t.Fatal(err)
	}
	if c := st.Confinement; c == nil || c.Enforced || !strings.Contains(c.Reason, "Landlock is not available") {
		t.Fatalf("confinement = %+v, want not enforced with the reason", c)
	}
	if p := st.Processes; len(p) != 1 || p[0].Confinement == nil || p[0].Confinement.Enforced {
		t.Fatalf("process status = %+v, want one unconfined process", p)
	}
}

// TestConfinementStartCost measures what the launcher adds to a server's
// start (spawn, handshake and a first call): the median of 20 starts each,
// confined and not, logged for the record and bounded.
func TestConfinementStartCost(t *testing.T) {
	h := newHostileHome(t)
	opts := fastOptions(t)
	opts.Launcher = []string{os.Args[0]}
	s := newSupervisor(t, opts)
	median := func(confined, networked bool) time.Duration {
		const starts = 20
		var took []time.Duration
		for i := range starts {
			spec := testSpec(fmt.Sprintf("cost%d-%v-%v", i, confined, networked), testmcp.Options{}, supervisor.PoolSpec{})
			if confined {
				spec.Confine = h.policy()
				if networked {
					spec.Confine.Network, spec.Confine.DenyPorts = true, []uint16{7391}
				}
			}
			apply(t, s, spec)
			start := time.Now()
			if _, _, err := call(t.Context(), s, spec.Name, "echo", map[string]any{"text": "x"}); err != nil {
				t.Fatalf("start %d (confined %v): %v", i, confined, err)
			}
			took = append(took, time.Since(start))
		}
		slices.Sort(took)
		return (took[starts/2-1] + took[starts/2]) / 2
	}
	plain, confined, networked := median(false, false), median(true, false), median(true, true)
	t.Logf("server start, median of 20: unconfined %.1f ms, confined %.1f ms (+%.1f ms), confined with network but one port %.1f ms (+%.1f ms)",
		ms(plain), ms(confined), ms(confined-plain), ms(networked), ms(networked-plain))
	if confined > plain+250*time.Millisecond {
		t.Errorf("confinement adds %v to a start; want well under 250ms", confined-plain)
	}
	if networked > plain+time.Second {
		t.Errorf("confinement with network but one port adds %v to a start; want under 1s", networked-plain)
	}
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
