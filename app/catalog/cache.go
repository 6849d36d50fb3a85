package catalog

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/switchboardhq/switchboard/app/atomicfile"
)

// CacheFileName is the file, inside Options.CacheDir, that keeps what the
// registry answered.
const CacheFileName = "registry.json"

// cacheFormat is the layout version of the cache file. A file of another
// version is ignored (and replaced on the next write): it is a cache.
const cacheFormat = 1

// maxCacheEntries bounds the cache; the entries fetched longest ago go
// first. The official registry lists a few thousand servers.
const maxCacheEntries = 20000

// cacheDoc is the cache file:
//
//	{"format": 1, "registry": "https://…", "updatedAt": "…", "fullAt": "…",
//	 "entries": [{"fetchedAt": "…", "entry": {…Entry…}}, …]}
//
// Entries keep their Status, so that a server that became deprecated
// replaces its active copy and is hidden, rather than lingering.
type cacheDoc struct {
	Format    int       `json:"format"`
	Registry  string    `json:"registry"`
	UpdatedAt time.Time `json:"updatedAt"`
	// FullAt is when the last complete listing (Catalog.Refresh) ended.
	FullAt  time.Time     `json:"fullAt,omitzero"`
	Entries []cachedEntry `json:"entries"`
}

type cachedEntry struct {
	FetchedAt time.Time `json:"fetchedAt"`
	Entry     Entry     `json:"entry"`
}

// A cache holds the registry's answers in memory and in a file, for when
// the registry cannot be reached. The file is read on first use and
// rewritten whole, atomically, after each change. With no directory it
// lives in memory only.
type cache struct {
	path     string // "" when in memory only
	registry string
	log      *slog.Logger

	mu        sync.Mutex
	loaded    bool
	entries   map[string]cachedEntry // by name
	updatedAt time.Time
	fullAt    time.Time
	savedAt   time.Time // when the file was last written
}

func newCache(dir, registry string, log *slog.Logger) *cache {
	c := &cache{registry: registry, log: log, entries: map[string]cachedEntry{}}
	if dir != "" {
		c.path = filepath.Join(dir, CacheFileName)
	}
	return c
}

// loadLocked reads the file once. A missing, unreadable or foreign file
// leaves the cache empty: the registry or the embedded catalog answer
// instead, and the next write replaces the file.
func (c *cache) loadLocked() {
	if c.loaded || c.path == "" {
		c.loaded = true
		return
	}
	c.loaded = true
	data, err := os.ReadFile(c.path)
	if errors.Is(err, fs.ErrNotExist) {
		return
	}
	if err != nil {
		c.log.Warn("catalog cache unreadable; ignoring it", "path", c.path, "err", err)
		return
	}
	var doc cacheDoc
	if err := json.Unmarshal(data, &doc); err != nil {
		c.log.Warn("catalog cache is corrupt; ignoring it", "path", c.path, "err", err)
		return
	}
	if doc.Format != cacheFormat {
		c.log.Info("catalog cache has another format; ignoring it", "path", c.path, "format", doc.Format)
		return
	}
	if doc.Registry != c.registry {
		c.log.Info("catalog cache is of another registry; ignoring it", "path", c.path, "registry", doc.Registry)
		return
	}
	for _, ce := range doc.Entries {
		if ValidName(ce.Entry.Name) {
			c.entries[ce.Entry.Name] = ce
		}
	}
	c.updatedAt, c.fullAt = doc.UpdatedAt, doc.FullAt
}

// resaveInterval is how long a cache whose entries did not change goes
// without being rewritten just to record newer fetch times: a search per
// keystroke must not rewrite a file of thousands of entries each time.
const resaveInterval = 5 * time.Minute

// upsert records entries fetched at t and saves the file when an entry is
// new or changed, or the file has not been written for resaveInterval.
func (c *cache) upsert(entries []Entry, t time.Time) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.loadLocked()
	changed := false
	for _, e := range entries {
		old, ok := c.entries[e.Name]
		if !ok || !sameEntry(old.Entry, e) {
			changed = true
		}
		c.entries[e.Name] = cachedEntry{FetchedAt: t, Entry: e.clone()}
	}
	c.updatedAt = t
	if !changed && t.Sub(c.savedAt) < resaveInterval {
		return nil
	}
	return c.saveLocked(t)
}

func sameEntry(a, b Entry) bool {
	ja, erra := json.Marshal(a)
	jb, errb := json.Marshal(b)
	return erra == nil && errb == nil && bytes.Equal(ja, jb)
}

// replace makes entries, a complete listing that ended at t, the whole
// cache, and saves the file.
func (c *cache) replace(entries []Entry, t time.Time) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.loaded = true
	c.entries = make(map[string]cachedEntry, len(entries))
	for _, e := range entries {
		c.entries[e.Name] = cachedEntry{FetchedAt: t, Entry: e.clone()}
	}
	c.updatedAt, c.fullAt = t, t
	return c.saveLocked(t)
}

func (c *cache) saveLocked(t time.Time) error {
	list := make([]cachedEntry, 0, len(c.entries))
	for _, ce := range c.entries {
		list = append(list, ce)
	}
	if len(list) > maxCacheEntries {
		// Keep the most recently fetched.
		slices.SortFunc(list, func(a, b cachedEntry) int { return b.FetchedAt.Compare(a.FetchedAt) })
		for _, ce := range list[maxCacheEntries:] {
			delete(c.entries, ce.Entry.Name)
		}
		list = list[:maxCacheEntries]
	}
	if c.path == "" {
		return nil
	}
	slices.SortFunc(list, func(a, b cachedEntry) int { return cmp.Compare(a.Entry.Name, b.Entry.Name) })
	doc := cacheDoc{Format: cacheFormat, Registry: c.registry, UpdatedAt: c.updatedAt, FullAt: c.fullAt, Entries: list}
	data, err := json.Marshal(doc)
	if err != nil {
		return fmt.Errorf("catalog cache %s: %w", c.path, err)
	}
	if err := os.MkdirAll(filepath.Dir(c.path), 0o700); err != nil {
		return fmt.Errorf("catalog cache: %w", err)
	}
	if err := atomicfile.Write(c.path, data, 0o600); err != nil {
		return fmt.Errorf("catalog cache: %w", err)
	}
	c.savedAt = t
	return nil
}

// all returns every cached entry, and whether the cache holds anything.
func (c *cache) all() ([]cachedEntry, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.loadLocked()
	out := make([]cachedEntry, 0, len(c.entries))
	for _, ce := range c.entries {
		ce.Entry = ce.Entry.clone()
		out = append(out, ce)
	}
	return out, len(c.entries) > 0
}

// get returns the cached entry of the named server.
func (c *cache) get(name string) (cachedEntry, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.loadLocked()
	ce, ok := c.entries[name]
	ce.Entry = ce.Entry.clone()
	return ce, ok
}
