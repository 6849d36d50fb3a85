// Package toolsearch is the index behind the gateway's search mode: the
// tools every server lists, in an SQLite FTS5 table of their own (in
// memory, owned by the Index; not history.db), ranked by BM25 with column
// weights, so that a client that would otherwise be handed hundreds of
// tools asks for the few it needs in plain words.
//
// What is indexed of a tool, one FTS5 column each (see weights):
//
//	server       the server's name (or alias), split into words
//	name         the tool's own name, split at _ - . and camelCase
//	title        its title
//	description  its description
//	params       the names of its input schema's properties, split
//	paramdocs    their descriptions
//
// The tokenizer is porter over unicode61, so "files" finds "file" and
// "searching" finds "search"; the name splitter lets "read file" find
// read_file and readFile alike; words of three letters or more are also
// searched as prefixes ("screen" finds "screenshot"). A user's query is free text: it is cut into
// words and each word is quoted, so no quote, star, parenthesis or NEAR of
// theirs is ever FTS5 syntax (see matchExpression).
package toolsearch

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"

	_ "modernc.org/sqlite" // the "sqlite" driver, FTS5 included
)

// A Tool is one tool as the index takes it.
type Tool struct {
	// Key is what a Hit returns for the tool: the name a client calls it
	// by (on the aggregated endpoint, server__tool). Unique per server.
	Key string
	// Name is the tool's own name, as its server lists it.
	Name        string
	Title       string
	Description string
	// InputSchema is the tool's JSON Schema, as decoded JSON
	// (map[string]any) or its text (json.RawMessage, []byte); nil is none.
	InputSchema any
}

// A Hit is one tool that matched a search, best first.
type Hit struct {
	Server string
	Key    string
	// Score is FTS5's weighted BM25: lower (more negative) is better.
	Score float64
}

// DefaultLimit is how many hits Search returns when asked for none; MaxLimit
// is the most it returns.
const (
	DefaultLimit = 5
	MaxLimit     = 50
)

// weights are the BM25 weights of the columns, in order. A tool's name and
// parameter names say what it does most densely; its server's name is a
// strong hint ("slack", "notion") but shared by every tool of the server;
// descriptions are long and loose, parameter descriptions looser still.
var weights = []float64{
	2,   // server
	10,  // name
	5,   // title
	2,   // description
	3,   // params
	0.5, // paramdocs
}

// An Index is safe for concurrent use. Create it with New and Close it.
type Index struct {
	db *sql.DB

	mu     sync.Mutex        // guards sums and orders writes
	sums   map[string][]byte // server → digest of what Replace last indexed
	search string            // the ranked query, weights spelled in
}

// New makes an empty index in its own in-memory database.
func New() (*Index, error) {
	// One connection: an in-memory database lives and dies with its
	// connection, and a search takes well under a millisecond, so readers
	// queueing behind each other costs less than a shared cache would.
	db, err := sql.Open("sqlite", "file::memory:")
	if err != nil {
		return nil, fmt.Errorf("tool search index: %w", err)
	}
	db.SetMaxOpenConns(1)
	db.SetMaxIdleConns(1)
	db.SetConnMaxLifetime(0)
	db.SetConnMaxIdleTime(0)
	const schema = `
CREATE TABLE tool (
	id     INTEGER PRIMARY KEY,
	server TEXT NOT NULL,
	key    TEXT NOT NULL
);
CREATE INDEX tool_server ON tool(server);
CREATE VIRTUAL TABLE tool_text USING fts5(
	server, name, title, description, params, paramdocs,
	tokenize = 'porter unicode61 remove_diacritics 2',
	prefix = '3 4'
);`
	if _, err := db.Exec(schema); err != nil {
		db.Close()
		return nil, fmt.Errorf("tool search index: creating the FTS5 tables: %w", err)
	}
	w := make([]string, len(weights))
	for i, v := range weights {
		w[i] = fmt.Sprint(v)
	}
	ix := &Index{db: db, sums: map[string][]byte{},
		search: `SELECT t.server, t.key, bm25(tool_text, ` + strings.Join(w, ", ") + `) AS score
FROM tool_text JOIN tool t ON t.id = tool_text.rowid
WHERE tool_text MATCH ?
ORDER BY score, t.server, t.key
LIMIT ?`}
	return ix, nil
}

// Close frees the index's database.
func (ix *Index) Close() error { return ix.db.Close() }

// Replace makes tools the indexed tools of server, in place of any it had;
// an empty list removes the server. Indexing the same list again costs a
// digest, not a rewrite.
func (ix *Index) Replace(ctx context.Context, server string, tools []Tool) error {
	if len(tools) == 0 {
		return ix.Remove(ctx, server)
	}
	rows := make([]row, 0, len(tools))
	for _, t := range tools {
		r, err := rowOf(server, t)
		if err != nil {
			return fmt.Errorf("indexing tool %q of server %q: %w", t.Key, server, err)
		}
		rows = append(rows, r)
	}
	sum := digest(rows)
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if old, ok := ix.sums[server]; ok && string(old) == string(sum) {
		return nil
	}
	err := ix.inTx(ctx, func(tx *sql.Tx) error {
		if err := deleteServer(ctx, tx, server); err != nil {
			return err
		}
		insTool, err := tx.PrepareContext(ctx, `INSERT INTO tool(server, key) VALUES (?, ?)`)
		if err != nil {
			return err
		}
		defer insTool.Close()
		insText, err := tx.PrepareContext(ctx,
			`INSERT INTO tool_text(rowid, server, name, title, description, params, paramdocs) VALUES (?, ?, ?, ?, ?, ?, ?)`)
		if err != nil {
			return err
		}
		defer insText.Close()
		for _, r := range rows {
			res, err := insTool.ExecContext(ctx, server, r.key)
			if err != nil {
				return err
			}
			id, err := res.LastInsertId()
			if err != nil {
				return err
			}
			if _, err := insText.ExecContext(ctx, id, r.server, r.name, r.title, r.description, r.params, r.paramDocs); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		delete(ix.sums, server) // whatever is there, the next Replace rewrites it
		return fmt.Errorf("indexing the tools of server %q: %w", server, err)
	}
	ix.sums[server] = sum
	return nil
}

// Remove drops every tool of server from the index.
func (ix *Index) Remove(ctx context.Context, server string) error {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if _, ok := ix.sums[server]; !ok {
		return nil
	}
	if err := ix.inTx(ctx, func(tx *sql.Tx) error { return deleteServer(ctx, tx, server) }); err != nil {
		return fmt.Errorf("removing the tools of server %q from the index: %w", server, err)
	}
	delete(ix.sums, server)
	return nil
}

// Servers returns the servers that have tools in the index.
func (ix *Index) Servers() []string {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	out := make([]string, 0, len(ix.sums))
	for s := range ix.sums {
		out = append(out, s)
	}
	return out
}

// Search returns the tools that best match query, at most limit of them
// (DefaultLimit when limit ≤ 0, never more than MaxLimit), best first. A
// query with no word in it matches nothing.
func (ix *Index) Search(ctx context.Context, query string, limit int) ([]Hit, error) {
	return ix.SearchFunc(ctx, query, limit, nil)
}

// SearchFunc is Search over the tools keep accepts (nil: all), for an
// endpoint that offers some of the indexed tools: the best limit of those,
// however far down the whole ranking they are.
func (ix *Index) SearchFunc(ctx context.Context, query string, limit int, keep func(Hit) bool) ([]Hit, error) {
	if limit <= 0 {
		limit = DefaultLimit
	}
	limit = min(limit, MaxLimit)
	expr := matchExpression(query)
	if expr == "" {
		return nil, nil
	}
	sqlLimit := limit
	if keep != nil {
		sqlLimit = -1 // no limit: the ranking is computed whole either way
	}
	rows, err := ix.db.QueryContext(ctx, ix.search, expr, sqlLimit)
	if err != nil {
		return nil, fmt.Errorf("searching tools for %q: %w", query, err)
	}
	defer rows.Close()
	var hits []Hit
	for len(hits) < limit && rows.Next() {
		var h Hit
		if err := rows.Scan(&h.Server, &h.Key, &h.Score); err != nil {
			return nil, fmt.Errorf("searching tools for %q: %w", query, err)
		}
		if keep == nil || keep(h) {
			hits = append(hits, h)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("searching tools for %q: %w", query, err)
	}
	return hits, nil
}

func (ix *Index) inTx(ctx context.Context, fn func(*sql.Tx) error) error {
	tx, err := ix.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	if err := fn(tx); err != nil {
		return errors.Join(err, tx.Rollback())
	}
	return tx.Commit()
}

func deleteServer(ctx context.Context, tx *sql.Tx, server string) error {
	if _, err := tx.ExecContext(ctx, `DELETE FROM tool_text WHERE rowid IN (SELECT id FROM tool WHERE server = ?)`, server); err != nil {
		return err
	}
	_, err := tx.ExecContext(ctx, `DELETE FROM tool WHERE server = ?`, server)
	return err
}

// row is a tool's text as it goes into the index.
type row struct {
	key, server, name, title, description, params, paramDocs string
}

func rowOf(server string, t Tool) (row, error) {
	if t.Key == "" {
		return row{}, errors.New("the tool has no key")
	}
	params, docs, err := schemaText(t.InputSchema)
	if err != nil {
		return row{}, err
	}
	return row{key: t.Key, server: splitName(server), name: splitName(t.Name) + " " + strings.ToLower(t.Name),
		title: t.Title, description: t.Description, params: params, paramDocs: docs}, nil
}

func digest(rows []row) []byte {
	h := sha256.New()
	for _, r := range rows {
		for _, s := range []string{r.key, r.server, r.name, r.title, r.description, r.params, r.paramDocs} {
			fmt.Fprintf(h, "%d:%s", len(s), s)
		}
	}
	return h.Sum(nil)
}

// maxSchemaDepth bounds how deep property names are collected: tools
// nest objects in arrays in objects, but not much further usefully.
const maxSchemaDepth = 4

// schemaText returns the property names of an input schema (split into
// words, nested objects' and array items' included) and their
// descriptions.
func schemaText(schema any) (names, docs string, err error) {
	switch s := schema.(type) {
	case nil:
		return "", "", nil
	case json.RawMessage:
		return schemaText([]byte(s))
	case []byte:
		if len(s) == 0 {
			return "", "", nil
		}
		var v any
		if err := json.Unmarshal(s, &v); err != nil {
			return "", "", fmt.Errorf("input schema: %w", err)
		}
		schema = v
	case map[string]any:
	default:
		data, err := json.Marshal(s)
		if err != nil {
			return "", "", fmt.Errorf("input schema: %w", err)
		}
		return schemaText(data)
	}
	var nb, db strings.Builder
	var walk func(v any, depth int)
	walk = func(v any, depth int) {
		m, ok := v.(map[string]any)
		if !ok || depth > maxSchemaDepth {
			return
		}
		if props, ok := m["properties"].(map[string]any); ok {
			for _, name := range sortedKeys(props) {
				nb.WriteString(splitName(name))
				nb.WriteByte(' ')
				if p, ok := props[name].(map[string]any); ok {
					if d, ok := p["description"].(string); ok {
						db.WriteString(d)
						db.WriteByte('\n')
					}
				}
				walk(props[name], depth+1)
			}
		}
		walk(m["items"], depth+1)
	}
	walk(schema, 0)
	return strings.TrimSpace(nb.String()), strings.TrimSpace(db.String()), nil
}
