// Package statuswriter notes the status code an HTTP handler answers, for
// the middlewares that act on it (logging, the legacy SSE answer count).
package statuswriter

import "net/http"

// Writer is an http.ResponseWriter that notes the first status written:
// WriteHeader's code, or 200 at the first Write without one. Status is 0
// while nothing was written.
type Writer struct {
	http.ResponseWriter
	Status int
}

func (w *Writer) WriteHeader(code int) {
	if w.Status == 0 {
		w.Status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *Writer) Write(b []byte) (int, error) {
	if w.Status == 0 {
		w.Status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the connection's other
// controls (flushing a stream, deadlines).
func (w *Writer) Unwrap() http.ResponseWriter { return w.ResponseWriter }
