package catalog

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"
)

// Defaults for Options.
const (
	DefaultSearchLimit = 50
	MaxSearchLimit     = 500
	DefaultRetryAfter  = 30 * time.Second
)

// Options configure a Catalog. Zero values mean the defaults.
type Options struct {
	// RegistryURL is the registry's base URL; "" means the official one.
	RegistryURL string
	// CacheDir is where the registry's answers are kept (the data
	// directory's catalog/ folder); it is created when first written.
	// "" keeps them in memory only.
	CacheDir string
	// HTTPClient makes the registry requests; nil means the catalog's own.
	HTTPClient *http.Client
	// Timeout bounds each registry request (DefaultTimeout).
	Timeout time.Duration
	// RetryAfter is how long, after the registry failed, the catalog
	// answers from the cache without asking the registry again, so that a
	// down or slow registry does not cost every search a timeout
	// (DefaultRetryAfter). Negative means ask every time.
	RetryAfter time.Duration
	// Offline, when true, never asks the registry: the cache and the
	// embedded catalog answer.
	Offline bool
	// MaxPages and MaxResponseBytes bound one registry listing (see
	// RegistryOptions).
	MaxPages         int
	MaxResponseBytes int64
	// Logger gets WARN when the registry fails or the cache cannot be
	// written, DEBUG for each request. nil discards.
	Logger *slog.Logger
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// A Catalog answers "what can I install?" from three sources, best first:
// the live registry (whose answers it saves to the cache), the cache (when
// the registry cannot be reached, however old), and the embedded, curated
// catalog (always). Embedded entries are part of every answer that matches
// them. A Catalog is safe for concurrent use.
type Catalog struct {
	reg      *Registry
	cache    *cache
	embedded []Entry
	offline  bool
	retry    time.Duration
	log      *slog.Logger
	now      func() time.Time
	// requestURL matches the URL of one request to the registry.
	requestURL *regexp.Regexp

	mu        sync.Mutex
	downUntil time.Time // the registry is not asked again before this
	downErr   error     // why it failed last
}

// A Result is an answer of the catalog.
type Result struct {
	Entries []Entry `json:"entries"`
	// Source says what answered for the registry's part: "registry" (live),
	// "cache" (the registry's earlier answers) or "embedded" (neither
	// could; only the curated catalog is shown).
	Source string `json:"source"`
	// Warning, when the registry could not answer, says why and what is
	// shown instead, in words for the user.
	Warning string `json:"warning,omitempty"`
	// FetchedAt is when the registry entries shown were fetched (the
	// oldest of them for the cache); zero when none are shown.
	FetchedAt time.Time `json:"fetchedAt,omitzero"`
	// More is true when there were more matches than the limit.
	More bool `json:"more,omitempty"`
}

// New returns a Catalog. It fails only on bad options or a broken
// embedded catalog; the registry is not contacted until asked.
func New(opts Options) (*Catalog, error) {
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	embedded, err := Embedded()
	if err != nil {
		return nil, err
	}
	reg, err := NewRegistry(RegistryOptions{
		URL:              opts.RegistryURL,
		HTTPClient:       opts.HTTPClient,
		Timeout:          opts.Timeout,
		MaxPages:         opts.MaxPages,
		MaxResponseBytes: opts.MaxResponseBytes,
		Logger:           log,
	})
	if err != nil {
		return nil, fmt.Errorf("catalog: %w", err)
	}
	c := &Catalog{
		reg:      reg,
		cache:    newCache(opts.CacheDir, reg.URL(), log),
		embedded: embedded,
		offline:  opts.Offline,
		retry:    opts.RetryAfter,
		log:      log,
		now:      opts.Now,
		// A URL ends at a space, a quote or a colon after its host.
		requestURL: regexp.MustCompile(regexp.QuoteMeta(reg.URL()) + `[^\s"]*[^\s":]`),
	}
	if c.retry == 0 {
		c.retry = DefaultRetryAfter
	}
	if c.now == nil {
		c.now = time.Now
	}
	return c, nil
}

// Close releases the catalog's idle registry connections.
func (c *Catalog) Close() { c.reg.Close() }

// Registry returns the catalog's registry client.
func (c *Catalog) Registry() *Registry { return c.reg }

// registryDown returns why the registry is not to be asked now, or nil.
func (c *Catalog) registryDown() error {
	if c.offline {
		return errors.New("the registry is turned off (offline mode)")
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.downErr != nil && c.now().Before(c.downUntil) {
		return c.downErr
	}
	return nil
}

// markDown notes that the registry failed with err and returns err as the
// catalog keeps it: naming the registry, not the request's URL (the next
// lookups, of other servers, show it as the reason the registry is down).
func (c *Catalog) markDown(err error) error {
	c.log.Warn("registry unreachable", "url", c.reg.URL(), "err", err)
	err = &downError{msg: c.requestURL.ReplaceAllString(err.Error(), c.reg.URL()), err: err}
	if c.retry < 0 {
		return err
	}
	c.mu.Lock()
	c.downErr, c.downUntil = err, c.now().Add(c.retry)
	c.mu.Unlock()
	return err
}

// downError is why the registry is down, as markDown words it.
type downError struct {
	msg string
	err error
}

func (e *downError) Error() string { return e.msg }
func (e *downError) Unwrap() error { return e.err }

func (c *Catalog) markUp() {
	c.mu.Lock()
	c.downErr, c.downUntil = nil, time.Time{}
	c.mu.Unlock()
}

// Search returns the servers matching query (every server when it is
// empty), at most limit of them (DefaultSearchLimit when limit <= 0,
// never more than MaxSearchLimit), best matches first: exact names and
// short names, then name prefixes, then names, titles and descriptions
// that contain the query; curated entries before registry ones at equal
// rank. A server listed by both the embedded catalog and the registry
// appears once, with the curated metadata and the registry's newer
// version, if any, in LatestVersion. Deprecated and deleted servers are
// left out.
//
// The error is non-nil only when ctx ends: an unreachable registry gives a
// Result from the cache or the embedded catalog, with a Warning.
func (c *Catalog) Search(ctx context.Context, query string, limit int) (Result, error) {
	if limit <= 0 {
		limit = DefaultSearchLimit
	}
	limit = min(limit, MaxSearchLimit)
	query = strings.TrimSpace(query)
	q := newMatcher(query)

	var res Result
	var fromRegistry []Entry
	regErr := c.registryDown()
	if regErr == nil {
		list, err := c.reg.List(ctx, ListOptions{Search: query, Limit: limit, IncludeInactive: true})
		switch {
		case err == nil:
			c.markUp()
			now := c.now()
			if err := c.cache.upsert(list.Entries, now); err != nil {
				c.log.Warn("catalog cache not written", "err", err)
			}
			fromRegistry = list.Entries
			res.Source, res.FetchedAt, res.More = SourceRegistry, now, list.More
		case ctx.Err() != nil:
			return Result{}, fmt.Errorf("catalog search %q: %w", query, ctx.Err())
		default:
			regErr = c.markDown(err)
		}
	}
	if regErr != nil {
		cached, has := c.cache.all()
		if has {
			for _, ce := range cached {
				if q.score(ce.Entry) < 0 {
					continue
				}
				fromRegistry = append(fromRegistry, ce.Entry)
				if res.FetchedAt.IsZero() || ce.FetchedAt.Before(res.FetchedAt) {
					res.FetchedAt = ce.FetchedAt
				}
			}
			res.Source = SourceCache
			res.Warning = c.cachedWarning(regErr, res.FetchedAt)
		} else {
			res.Source = SourceEmbedded
			res.Warning = fmt.Sprintf("registry unreachable: %v; no cached registry results, showing the built-in catalog only", regErr)
		}
	}

	var embedded []Entry
	for _, e := range c.embedded {
		if q.score(e) >= 0 {
			embedded = append(embedded, e.clone())
		}
	}
	entries := c.merge(embedded, fromRegistry)
	if !res.FetchedAt.IsZero() && !slices.ContainsFunc(entries, func(e Entry) bool { return e.Source == SourceRegistry }) {
		// No registry entry is shown; the time would describe nothing.
		res.FetchedAt = time.Time{}
	}
	slices.SortStableFunc(entries, func(a, b Entry) int {
		return cmp.Or(
			cmp.Compare(q.scoreOrLast(a), q.scoreOrLast(b)),
			cmp.Compare(sourceRank(a), sourceRank(b)),
			cmp.Compare(a.ShortName, b.ShortName),
			cmp.Compare(a.Name, b.Name),
		)
	})
	if len(entries) > limit {
		entries, res.More = entries[:limit], true
	}
	res.Entries = entries
	return res, nil
}

// cachedWarning says that the registry failed and when the cached answer
// shown was fetched. With no time (the cache holds no match) it gives the
// cache's last update.
func (c *Catalog) cachedWarning(regErr error, t time.Time) string {
	if t.IsZero() {
		c.cache.mu.Lock()
		t = c.cache.updatedAt
		c.cache.mu.Unlock()
	}
	when := "an unknown time"
	if !t.IsZero() {
		when = t.Local().Format("2006-01-02 15:04")
	}
	return fmt.Sprintf("registry unreachable: %v; showing cached results from %s", regErr, when)
}

func sourceRank(e Entry) int {
	if e.Source == SourceEmbedded {
		return 0
	}
	return 1
}

// merge joins curated and registry entries: registry entries that are not
// active are dropped; one that is the same server as a curated entry (same
// name, or a package with the same registry type and identifier) is folded
// into it, its version showing as LatestVersion when newer.
func (c *Catalog) merge(embedded, registry []Entry) []Entry {
	out := slices.Clone(embedded)
	byName := map[string]int{}
	byPkg := map[string]int{}
	for i, e := range out {
		byName[e.Name] = i
		for _, p := range e.Packages {
			byPkg[packageKey(p)] = i
		}
	}
	for _, r := range registry {
		i, ok := byName[r.Name]
		if !ok {
			for _, p := range r.Packages {
				if j, found := byPkg[packageKey(p)]; found {
					i, ok = j, true
					break
				}
			}
		}
		if ok {
			// byName also holds registry entries already taken: a
			// repeated one is dropped, one of a curated server folded.
			if i < len(embedded) {
				foldLatest(&out[i], r)
			}
			continue
		}
		if r.Status != StatusActive {
			continue
		}
		byName[r.Name] = len(out)
		out = append(out, r)
	}
	return out
}

// foldLatest records r's version on the curated entry e when it is newer.
func foldLatest(e *Entry, r Entry) {
	if r.Status != StatusActive {
		return
	}
	if Newer(e.Version, r.Version) && (e.LatestVersion == "" || Newer(e.LatestVersion, r.Version)) {
		e.LatestVersion = r.Version
	}
}

// packageKey identifies a package across sources: its type and its
// identifier without an OCI tag or digest.
func packageKey(p Package) string {
	id := strings.ToLower(p.Identifier)
	if p.RegistryType == RegistryOCI {
		if i := strings.LastIndex(id, "@"); i >= 0 {
			id = id[:i]
		}
		if i := strings.LastIndex(id, ":"); i > strings.LastIndex(id, "/") {
			id = id[:i]
		}
	}
	return p.RegistryType + " " + id
}

// Get returns the server with this registry name (or, for a curated
// server, short name): see Lookup.
func (c *Catalog) Get(ctx context.Context, name string) (Entry, error) {
	res, err := c.Lookup(ctx, name)
	if err != nil {
		return Entry{}, err
	}
	return res.Entries[0], nil
}

// Lookup returns the server with this registry name, or a curated server
// by its short name ("filesystem"), as a Result with one entry that says
// which source answered. A curated server comes back with its curated
// metadata and, when the registry (or the cache) knows a newer version,
// LatestVersion. A server known to nobody, or hidden (deprecated or
// deleted), gives an error wrapping ErrNotFound.
func (c *Catalog) Lookup(ctx context.Context, name string) (Result, error) {
	name = strings.TrimSpace(name)
	emb, curated := c.embeddedEntry(name)
	if !curated && !ValidName(name) {
		return Result{}, fmt.Errorf("catalog: unknown server %q: not in the built-in catalog, and not a registry name (like io.github.owner/server): %w", name, ErrNotFound)
	}
	regName := name
	if curated {
		regName = emb.Name
	}

	regErr := c.registryDown()
	if regErr == nil {
		r, err := c.reg.Latest(ctx, regName)
		switch {
		case err == nil:
			c.markUp()
			now := c.now()
			if err := c.cache.upsert([]Entry{r}, now); err != nil {
				c.log.Warn("catalog cache not written", "err", err)
			}
			if curated {
				foldLatest(&emb, r)
				return Result{Entries: []Entry{emb}, Source: SourceRegistry, FetchedAt: now}, nil
			}
			if r.Status != StatusActive {
				return Result{}, fmt.Errorf("catalog: server %s is %s in the registry: %w", name, r.Status, ErrNotFound)
			}
			return Result{Entries: []Entry{r}, Source: SourceRegistry, FetchedAt: now}, nil
		case errors.Is(err, ErrNotFound):
			// The registry answered: it does not list the server.
			c.markUp()
			if curated {
				return Result{Entries: []Entry{emb}, Source: SourceRegistry}, nil
			}
			return Result{}, fmt.Errorf("catalog: server %s is not in the registry: %w", name, ErrNotFound)
		case ctx.Err() != nil:
			return Result{}, fmt.Errorf("catalog lookup %s: %w", name, ctx.Err())
		default:
			regErr = c.markDown(err)
		}
	}

	ce, cached := c.cache.get(regName)
	switch {
	case cached && curated:
		foldLatest(&emb, ce.Entry)
		return Result{Entries: []Entry{emb}, Source: SourceCache, FetchedAt: ce.FetchedAt, Warning: c.cachedWarning(regErr, ce.FetchedAt)}, nil
	case curated:
		return Result{Entries: []Entry{emb}, Source: SourceEmbedded,
			Warning: fmt.Sprintf("registry unreachable: %v; showing the built-in catalog's entry", regErr)}, nil
	case cached && ce.Entry.Status == StatusActive:
		return Result{Entries: []Entry{ce.Entry}, Source: SourceCache, FetchedAt: ce.FetchedAt, Warning: c.cachedWarning(regErr, ce.FetchedAt)}, nil
	case cached:
		return Result{}, fmt.Errorf("catalog: server %s is %s in the registry (cached): %w", name, ce.Entry.Status, ErrNotFound)
	default:
		return Result{}, fmt.Errorf("catalog: server %s: registry unreachable and the server is not cached: %w", name, regErr)
	}
}

// embeddedEntry finds a curated entry by registry name or short name.
func (c *Catalog) embeddedEntry(name string) (Entry, bool) {
	for _, e := range c.embedded {
		if e.Name == name || e.ShortName == name {
			return e.clone(), true
		}
	}
	return Entry{}, false
}

// Refresh reads the registry's whole listing (up to the page bound) into
// the cache, as aggregators are asked to do about hourly. A complete
// listing replaces the cache, so servers that left the registry leave it
// too; a listing cut short by the page bound is only added.
func (c *Catalog) Refresh(ctx context.Context) error {
	if c.offline {
		return errors.New("catalog refresh: the registry is turned off (offline mode)")
	}
	list, err := c.reg.List(ctx, ListOptions{IncludeInactive: true})
	if err != nil {
		if ctx.Err() == nil {
			c.markDown(err)
		}
		return fmt.Errorf("catalog refresh: %w", err)
	}
	c.markUp()
	if list.More {
		err = c.cache.upsert(list.Entries, c.now())
	} else {
		err = c.cache.replace(list.Entries, c.now())
	}
	if err != nil {
		return fmt.Errorf("catalog refresh: %w", err)
	}
	c.log.Info("catalog refreshed", "url", c.reg.URL(), "entries", len(list.Entries), "pages", list.Pages, "complete", !list.More)
	return nil
}

// An Update says whether a newer version of an installed server exists.
type Update struct {
	Name      string `json:"name"`
	Installed string `json:"installed"`
	// Latest is the newest version known (the installed one when there is
	// no newer).
	Latest string `json:"latest"`
	// Available is true when Latest is newer than Installed.
	Available bool `json:"available"`
	// Entry is what to install to update: the curated entry when its
	// version is the newest, else the registry's own entry of the newest
	// version. Empty when no update is available.
	Entry *Entry `json:"entry,omitempty"`
	// Source and Warning are those of the lookup (see Result).
	Source  string `json:"source"`
	Warning string `json:"warning,omitempty"`
}

// CheckUpdate tells whether a newer version than installed exists for the
// named server, in the curated catalog or the registry (or its cache).
// Versions are compared as semver (and PEP 440, calendar versions);
// versions that cannot be compared are not reported as updates.
func (c *Catalog) CheckUpdate(ctx context.Context, name, installed string) (Update, error) {
	res, err := c.Lookup(ctx, name)
	if err != nil {
		return Update{}, err
	}
	e := res.Entries[0]
	u := Update{Name: e.Name, Installed: installed, Latest: installed, Source: res.Source, Warning: res.Warning}
	if Newer(installed, e.Version) {
		u.Latest, u.Available, u.Entry = e.Version, true, &e
	}
	if e.Source == SourceEmbedded && e.LatestVersion != "" && Newer(u.Latest, e.LatestVersion) {
		// The registry has a newer version than the curated one: its own
		// entry says how to run that version.
		if r, ok := c.registryEntry(ctx, e.Name); ok && r.Version == e.LatestVersion {
			if _, err := r.RunnablePackage(); err == nil {
				u.Latest, u.Available, u.Entry = r.Version, true, &r
			}
		}
	}
	return u, nil
}

// registryEntry returns the registry's (or the cache's) latest entry for
// name, without the curated overlay.
func (c *Catalog) registryEntry(ctx context.Context, name string) (Entry, bool) {
	if c.registryDown() == nil {
		if r, err := c.reg.Latest(ctx, name); err == nil {
			return r, r.Status == StatusActive
		}
	}
	ce, ok := c.cache.get(name)
	return ce.Entry, ok && ce.Entry.Status == StatusActive
}
