package catalog

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// DefaultRegistryURL is the official MCP registry.
const DefaultRegistryURL = "https://registry.modelcontextprotocol.io"

// Defaults for RegistryOptions.
const (
	DefaultTimeout          = 10 * time.Second
	DefaultMaxPages         = 20
	DefaultPageSize         = 100 // the registry's maximum
	DefaultMaxResponseBytes = 8 << 20
)

// ErrNotFound is wrapped by errors for a server the registry (or the
// catalog) does not know.
var ErrNotFound = errors.New("server not found")

// RegistryOptions configure a Registry. Zero values mean the defaults.
type RegistryOptions struct {
	// URL is the registry's base URL, without /v0.1.
	URL string
	// HTTPClient makes the requests; nil means a client of Switchboard's
	// own (see Registry.Close). Its Timeout, if any, applies too.
	HTTPClient *http.Client
	// Timeout bounds each request, on top of the caller's context.
	Timeout time.Duration
	// MaxPages bounds how many pages one List reads.
	MaxPages int
	// PageSize is the limit asked of the registry per page (1 to 100).
	PageSize int
	// MaxResponseBytes bounds the size of one response body.
	MaxResponseBytes int64
	// UserAgent is sent with every request.
	UserAgent string
	Logger    *slog.Logger
}

// A Registry is a client of an MCP registry's v0.1 API (the official one
// or a subregistry that speaks the same API). It is safe for concurrent
// use.
type Registry struct {
	base      *url.URL
	client    *http.Client
	ownClient bool
	timeout   time.Duration
	maxPages  int
	pageSize  int
	maxBytes  int64
	userAgent string
	log       *slog.Logger
}

// NewRegistry returns a client of the registry at opts.URL (or the
// official one).
func NewRegistry(opts RegistryOptions) (*Registry, error) {
	raw := opts.URL
	if raw == "" {
		raw = DefaultRegistryURL
	}
	base, err := url.Parse(strings.TrimRight(raw, "/"))
	if err != nil {
		return nil, fmt.Errorf("registry URL %q: %w", raw, err)
	}
	if (base.Scheme != "https" && base.Scheme != "http") || base.Host == "" {
		return nil, fmt.Errorf("registry URL %q: want an http or https URL with a host", raw)
	}
	if base.RawQuery != "" || base.Fragment != "" {
		return nil, fmt.Errorf("registry URL %q: must not have a query or fragment", raw)
	}
	r := &Registry{
		base:      base,
		client:    opts.HTTPClient,
		timeout:   opts.Timeout,
		maxPages:  opts.MaxPages,
		pageSize:  opts.PageSize,
		maxBytes:  opts.MaxResponseBytes,
		userAgent: opts.UserAgent,
		log:       opts.Logger,
	}
	if r.client == nil {
		// Not http.DefaultClient: Close must be able to drop this
		// client's idle connections without touching anyone else's.
		r.client = &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}
		r.ownClient = true
	}
	if r.timeout <= 0 {
		r.timeout = DefaultTimeout
	}
	if r.maxPages <= 0 {
		r.maxPages = DefaultMaxPages
	}
	if r.pageSize <= 0 || r.pageSize > DefaultPageSize {
		r.pageSize = DefaultPageSize
	}
	if r.maxBytes <= 0 {
		r.maxBytes = DefaultMaxResponseBytes
	}
	if r.userAgent == "" {
		r.userAgent = "switchboard-catalog"
	}
	if r.log == nil {
		r.log = slog.New(slog.DiscardHandler)
	}
	return r, nil
}

// URL returns the registry's base URL.
func (r *Registry) URL() string { return r.base.String() }

// Close drops idle connections of the client the Registry made itself; a
// client given in the options is the caller's to manage.
func (r *Registry) Close() {
	if r.ownClient {
		r.client.CloseIdleConnections()
	}
}

// ListOptions select what List returns.
type ListOptions struct {
	// Search is the registry's search: a case-insensitive substring of
	// the name (and, on newer registries, the description). Empty lists
	// every server.
	Search string
	// Limit is how many entries to return at most; 0 means as many as
	// MaxPages pages hold.
	Limit int
	// IncludeInactive keeps deprecated and deleted entries (with their
	// Status) instead of hiding them. Deleted entries only come back when
	// the registry is asked for them, which List does not do.
	IncludeInactive bool
}

// A ListResult is what List read.
type ListResult struct {
	Entries []Entry
	// Pages is how many pages were read.
	Pages int
	// More is true when the registry had more entries than were read
	// (Limit or MaxPages was reached).
	More bool
}

// The registry's response envelope (docs/reference/api): servers, each a
// server.json with the registry's metadata beside it, and a cursor.
type serverResponse struct {
	Server json.RawMessage `json:"server"`
	Meta   struct {
		Official *struct {
			Status        string `json:"status"`
			StatusMessage string `json:"statusMessage"`
			IsLatest      *bool  `json:"isLatest"`
		} `json:"io.modelcontextprotocol.registry/official"`
	} `json:"_meta"`
}

type listResponse struct {
	Servers  []serverResponse `json:"servers"`
	Metadata struct {
		NextCursor string `json:"nextCursor"`
		Count      int    `json:"count"`
	} `json:"metadata"`
}

// List reads the latest version of every server that matches opts, page by
// page, following metadata.nextCursor, until Limit entries, the last page,
// or MaxPages pages. Each request is bounded by the Registry's Timeout and
// by ctx.
func (r *Registry) List(ctx context.Context, opts ListOptions) (ListResult, error) {
	var res ListResult
	cursor := ""
	seen := map[string]bool{}
	for {
		if res.Pages == r.maxPages {
			res.More = true
			r.log.Info("registry listing stopped at the page limit", "url", r.base.String(), "pages", res.Pages)
			return res, nil
		}
		pageSize := r.pageSize
		if opts.Limit > 0 {
			// Ask for a little more than is missing: hidden entries
			// do not count toward the limit.
			pageSize = min(r.pageSize, max(opts.Limit-len(res.Entries)+10, 1))
		}
		q := url.Values{}
		q.Set("limit", strconv.Itoa(pageSize))
		q.Set("version", "latest")
		if opts.Search != "" {
			q.Set("search", opts.Search)
		}
		if cursor != "" {
			q.Set("cursor", cursor)
		}
		u := r.endpoint("servers", q)
		var page listResponse
		if err := r.get(ctx, u, &page); err != nil {
			return res, err
		}
		res.Pages++
		for i, s := range page.Servers {
			e, err := s.entry()
			if err != nil {
				// One bad entry must not hide the others.
				r.log.Debug("registry entry skipped", "url", u, "index", i, "err", err)
				continue
			}
			if !opts.IncludeInactive && e.Status != StatusActive {
				continue
			}
			res.Entries = append(res.Entries, e)
			if opts.Limit > 0 && len(res.Entries) == opts.Limit {
				res.More = page.Metadata.NextCursor != "" || i < len(page.Servers)-1
				return res, nil
			}
		}
		next := page.Metadata.NextCursor
		if next == "" {
			return res, nil
		}
		if seen[next] {
			return res, fmt.Errorf("registry %s: the cursor %q came back twice; the listing would never end", u, next)
		}
		seen[next] = true
		cursor = next
	}
}

// Latest returns the latest version of the named server, whatever its
// status (Status says it). A server the registry does not know gives an
// error wrapping ErrNotFound.
func (r *Registry) Latest(ctx context.Context, name string) (Entry, error) {
	if !ValidName(name) {
		return Entry{}, fmt.Errorf("registry: %q is not a server name (like io.github.owner/server)", name)
	}
	// The name's slash is escaped (%2F), as the registry requires.
	u := r.base.String() + "/v0.1/servers/" + url.PathEscape(name) + "/versions/latest"
	var s serverResponse
	if err := r.get(ctx, u, &s); err != nil {
		return Entry{}, err
	}
	e, err := s.entry()
	if err != nil {
		return Entry{}, fmt.Errorf("registry %s: %w", u, err)
	}
	if e.Name != name {
		return Entry{}, fmt.Errorf("registry %s: answered with server %q", u, e.Name)
	}
	return e, nil
}

func (r *Registry) endpoint(path string, q url.Values) string {
	return r.base.String() + "/v0.1/" + path + "?" + q.Encode()
}

// httpError is a registry answer with a status other than 200.
type httpError struct {
	url    string
	status int
	text   string
	body   string
}

func (e *httpError) Error() string {
	msg := fmt.Sprintf("registry %s: HTTP %d %s", e.url, e.status, e.text)
	if e.body != "" {
		msg += ": " + e.body
	}
	return msg
}

func (e *httpError) Is(target error) bool {
	return target == ErrNotFound && e.status == http.StatusNotFound
}

// get fetches u and decodes its JSON body into v, within the per-request
// timeout and the size bound.
func (r *Registry) get(parent context.Context, u string, v any) error {
	where := u
	ctx, cancel := context.WithTimeout(parent, r.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return fmt.Errorf("registry %s: %w", where, err)
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", r.userAgent)
	start := time.Now()
	resp, err := r.client.Do(req)
	if err != nil {
		if parent.Err() == nil && ctx.Err() != nil {
			return &transportError{fmt.Sprintf("registry %s: no answer within %v", where, r.timeout), err}
		}
		return &transportError{fmt.Sprintf("registry %s: %s", where, plainReason(err)), err}
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, r.maxBytes+1))
	if err != nil {
		return fmt.Errorf("registry %s: reading the response: %w", where, err)
	}
	r.log.Debug("registry request", "url", u, "status", resp.StatusCode, "bytes", len(body), "took", time.Since(start))
	if resp.StatusCode != http.StatusOK {
		return &httpError{url: where, status: resp.StatusCode, text: http.StatusText(resp.StatusCode), body: snippet(body)}
	}
	if int64(len(body)) > r.maxBytes {
		return fmt.Errorf("registry %s: response larger than %d bytes", where, r.maxBytes)
	}
	if err := json.Unmarshal(body, v); err != nil {
		return fmt.Errorf("registry %s: the response is not the registry's JSON (%s): %w", where, snippet(body), err)
	}
	return nil
}

// transportError is a request that got no answer, said plainly; the
// error it wraps (a *url.Error) stays reachable with errors.As.
type transportError struct {
	msg string
	err error
}

func (e *transportError) Error() string { return e.msg }
func (e *transportError) Unwrap() error { return e.err }

// plainReason says why a request got no answer without the *url.Error
// around it (which repeats the URL) and without the resolver's address
// that a DNS error names.
func plainReason(err error) string {
	var dns *net.DNSError
	if errors.As(err, &dns) {
		if dns.IsNotFound {
			return fmt.Sprintf("the name %s does not resolve (no such host)", dns.Name)
		}
		if dns.IsTimeout {
			return fmt.Sprintf("looking up %s timed out", dns.Name)
		}
		return fmt.Sprintf("cannot look up %s: %s", dns.Name, dns.Err)
	}
	if errors.Is(err, syscall.ECONNREFUSED) {
		return "connection refused"
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err.Error()
	}
	return err.Error()
}

// snippet returns the start of a response body for an error message, on
// one line.
func snippet(b []byte) string {
	const n = 200
	s := strings.Join(strings.Fields(string(b)), " ")
	if len(s) > n {
		s = s[:n] + "…"
	}
	return s
}

// entry turns one registry answer into an Entry with Switchboard's fields
// filled: Source "registry", Status from the registry's metadata (active
// when a subregistry gives none), and a suggested ShortName.
func (s serverResponse) entry() (Entry, error) {
	if len(s.Server) == 0 {
		return Entry{}, errors.New(`no "server" object`)
	}
	var e Entry
	if err := json.Unmarshal(s.Server, &e); err != nil {
		return Entry{}, fmt.Errorf("server.json: %w", err)
	}
	if !ValidName(e.Name) {
		return Entry{}, fmt.Errorf("server name %q is not valid", e.Name)
	}
	if strings.TrimSpace(e.Version) == "" {
		return Entry{}, fmt.Errorf("server %s has no version", e.Name)
	}
	// The fields below are Switchboard's: what the document said under
	// these names (an old server.json had "status") is not trusted.
	status := e.Status
	e.ShortName, e.Source, e.Status, e.LatestVersion = SuggestShortName(e.Name), SourceRegistry, "", ""
	switch {
	case s.Meta.Official != nil && s.Meta.Official.Status != "":
		e.Status = s.Meta.Official.Status
	case status != "":
		e.Status = status
	default:
		e.Status = StatusActive
	}
	return e, nil
}
