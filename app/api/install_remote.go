package api

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/switchboardhq/switchboard/app/api/wire"
	"github.com/switchboardhq/switchboard/app/catalog"
	"github.com/switchboardhq/switchboard/app/catalog/install"
	"github.com/switchboardhq/switchboard/app/config"
)

// remoteVerifyTimeout bounds the first connect to a remote installed from
// the catalog. A remote that does not answer in time stays configured: the
// supervisor keeps trying, as for any remote server.
const remoteVerifyTimeout = 30 * time.Second

// remoteListTimeout bounds the wait for a connected remote's first tool
// listing, which the install shows.
const remoteListTimeout = 10 * time.Second

// InstallTypeRemote is config.Install.Type of a server installed from a
// catalog entry's remote.
const InstallTypeRemote = "remote"

// startRemoteInstall installs the remote of a catalog entry: the entry has
// only remotes, or the request asked for its remote. The remote's inputs
// (URL variables, headers) are checked, and the whole entry validated,
// before the install starts, so a missing required input is a 400 naming
// it with nothing written.
func (s *Server) startRemoteInstall(r *http.Request, entry catalog.Entry, name string, values map[string]string) (wire.InstallView, error) {
	rem, err := entry.InstallableRemote()
	if err != nil {
		return wire.InstallView{}, errorf(http.StatusUnprocessableEntity, "%v", err)
	}
	setup, err := rem.Setup(values)
	if err != nil {
		return wire.InstallView{}, errorf(http.StatusBadRequest, "invalid inputs for %s: %v", entry.Name, err)
	}
	sc := config.Server{URL: setup.URL, Transport: setup.Transport, Headers: setup.Headers,
		Install: &config.Install{Entry: entry.Name, Version: entry.Version, Type: InstallTypeRemote}}
	for h := range setup.SecretHeaders {
		if sc.SecretHeaders == nil {
			sc.SecretHeaders = map[string]string{}
		}
		sc.SecretHeaders[h] = h
	}
	if err := s.checkNewRemote(r, name, sc); err != nil {
		return wire.InstallView{}, err
	}
	if len(setup.SecretHeaders) > 0 && s.secrets == nil {
		return wire.InstallView{}, errorf(http.StatusServiceUnavailable, "cannot install %q: it has secret headers (%s) and this daemon has no secret store",
			name, strings.Join(slices.Sorted(maps.Keys(setup.SecretHeaders)), ", "))
	}
	return s.startJob(wire.InstallView{Server: name, Entry: entry.Name, Version: entry.Version, Remote: true},
		func(ctx context.Context, j *installJob) { s.installRemote(ctx, j, entry, name, sc, setup) })
}

// installRemote runs the install of a remote: resolve (said), configure
// (secrets to the store, the entry to config.json, through the same code
// as POST /api/v1/remotes), verify (the first connect). A remote that
// refuses the connect (a 401 asking for a sign-in, a host that is down)
// leaves the install successful, with a notice saying what the server
// needs; its state and logs show the rest. Cancelling the install takes
// the server out again.
func (s *Server) installRemote(ctx context.Context, j *installJob, entry catalog.Entry, name string, sc config.Server, setup catalog.RemoteSetup) {
	fail := func(phase install.Phase, err error) {
		s.log.Warn("install failed", "server", name, "entry", entry.Name, "err", err)
		s.journal(name, JournalInstall, fmt.Sprintf("install of %s failed: %v", entry.Name, err))
		s.report(j, install.Progress{Phase: phase, Percent: 100, Done: true, Err: err.Error(), Line: "install failed: " + err.Error()}, nil, "")
	}
	line := fmt.Sprintf("remote %s at %s", setup.Transport, setup.URL)
	if len(setup.Headers) > 0 {
		line += "; headers " + strings.Join(slices.Sorted(maps.Keys(setup.Headers)), ", ")
	}
	if len(setup.SecretHeaders) > 0 {
		line += "; secret headers " + strings.Join(slices.Sorted(maps.Keys(setup.SecretHeaders)), ", ")
	}
	s.report(j, install.Progress{Phase: install.PhaseResolve, Percent: 10, Line: line}, nil, "")
	if err := ctx.Err(); err != nil {
		fail(install.PhaseResolve, fmt.Errorf("install was stopped: %w", err))
		return
	}

	s.report(j, install.Progress{Phase: install.PhaseConfigure, Percent: 40,
		Line: fmt.Sprintf("storing %d secret headers and adding %s to config.json", len(setup.SecretHeaders), name)}, nil, "")
	if _, err := s.configureRemote(ctx, name, sc, setup.SecretHeaders); err != nil {
		fail(install.PhaseConfigure, err)
		return
	}

	s.report(j, install.Progress{Phase: install.PhaseVerify, Percent: 70, Line: "connecting to " + setup.URL}, nil, "")
	vctx, cancel := context.WithTimeout(ctx, remoteVerifyTimeout)
	err := s.sup.Start(vctx, name)
	v := s.view(name, sc)
	if err == nil {
		v = s.awaitListing(vctx, name, sc)
	}
	cancel()
	if ctx.Err() != nil {
		s.unconfigureRemote(name, setup)
		fail(install.PhaseVerify, fmt.Errorf("install was stopped: %w; %s was taken out of config.json again", ctx.Err(), name))
		return
	}
	notice := remoteNotice(name, err, v)
	var tools []install.Tool
	for _, t := range v.Tools {
		tools = append(tools, install.Tool{Name: t.Name, Title: t.Title, Description: t.Description})
	}
	final := install.Progress{Phase: install.PhaseVerify, Percent: 100, Done: true,
		Line: fmt.Sprintf("installed %s, remote at %s: %d tools", name, setup.URL, len(tools))}
	done := fmt.Sprintf("installed %s %s as a remote server (%d tools)", entry.Name, entry.Version, len(tools))
	if notice != "" {
		final.Line = fmt.Sprintf("installed %s, remote at %s: %s", name, setup.URL, notice)
		done = fmt.Sprintf("installed %s %s as a remote server; %s", entry.Name, entry.Version, notice)
	}
	s.log.Info("installed a remote server", "server", name, "entry", entry.Name, "tools", len(tools), "connected", err == nil)
	s.journal(name, JournalInstall, done)
	s.report(j, final, tools, notice)
}

// awaitListing returns the view of a remote server that just connected once
// its tools are listed (the listing follows the connect), or as it is after
// remoteListTimeout, when ctx ends, or at once when this API has no tool
// source to ask.
func (s *Server) awaitListing(ctx context.Context, name string, sc config.Server) wire.ServerView {
	if s.tools == nil {
		return s.view(name, sc)
	}
	ctx, cancel := context.WithTimeout(ctx, remoteListTimeout)
	defer cancel()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		v := s.view(name, sc)
		if v.Listed || v.State != wire.StateRunning {
			return v
		}
		select {
		case <-ctx.Done():
			return v
		case <-tick.C:
		}
	}
}

// remoteNotice says what a remote server that was just installed still
// needs: "" when it connected, a sign-in when it answered 401, else why
// it did not connect yet.
func remoteNotice(name string, startErr error, v wire.ServerView) string {
	if a := v.Auth; a != nil && a.State != wire.AuthSignedIn {
		return fmt.Sprintf("it needs a sign-in (%s): run `switchboard auth login %s`", a.State+withReason(a.Reason), name)
	}
	if startErr == nil && v.State != wire.StateFailing && v.State != wire.StateBackoff {
		return ""
	}
	why := v.LastError
	if startErr != nil {
		why = startErr.Error()
	}
	if needsSignIn(why) {
		return fmt.Sprintf("it needs a sign-in (the remote answered 401 Unauthorized): run `switchboard auth login %s`", name)
	}
	if errors.Is(startErr, context.DeadlineExceeded) {
		why = fmt.Sprintf("no answer within %v", remoteVerifyTimeout)
	}
	return fmt.Sprintf("it did not connect yet (%s); Switchboard keeps trying: `switchboard servers %s` shows its state", why, name)
}

// withReason is ": reason", or "" for none.
func withReason(reason string) string {
	if reason == "" {
		return ""
	}
	return ": " + reason
}

// unauthorizedRE finds a remote's 401 in a connect error: the go-sdk says
// "Unauthorized"; a bare "401" could be a port.
var unauthorizedRE = regexp.MustCompile(`(?i)\bunauthorized\b|\b(HTTP|status) 401\b`)

// needsSignIn reports whether a connect error is the remote asking for
// credentials (HTTP 401).
func needsSignIn(msg string) bool { return unauthorizedRE.MatchString(msg) }

// unconfigureRemote takes a remote server whose install was stopped out of
// config.json and its secret headers out of the store.
func (s *Server) unconfigureRemote(name string, setup catalog.RemoteSetup) {
	ctx, cancel := context.WithTimeout(context.Background(), wire.DefaultActionTimeout)
	defer cancel()
	if _, err := s.update(ctx, "", func(c *config.Config) error {
		delete(c.Servers, name)
		return nil
	}); err != nil {
		s.log.Warn("rolling back a remote install", "server", name, "err", err)
	}
	var stored []storedSecret
	for h := range setup.SecretHeaders {
		stored = append(stored, storedSecret{name, h})
	}
	if s.secrets != nil {
		s.forgetSecrets(stored)
	}
}
