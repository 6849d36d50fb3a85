package statuswriter

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

func TestWriterNotesTheFirstStatus(t *testing.T) {
	for _, tt := range []struct {
		name    string
		handler func(w http.ResponseWriter)
		want    int
	}{
		{"nothing written", func(http.ResponseWriter) {}, 0},
		{"a body alone is 200", func(w http.ResponseWriter) { w.Write([]byte("hi")) }, http.StatusOK},
		{"the code written", func(w http.ResponseWriter) { w.WriteHeader(http.StatusAccepted) }, http.StatusAccepted},
		{"the first code, not a later one", func(w http.ResponseWriter) {
			w.WriteHeader(http.StatusNotFound)
			w.WriteHeader(http.StatusOK)
		}, http.StatusNotFound},
	} {
		t.Run(tt.name, func(t *testing.T) {
			sw := &Writer{ResponseWriter: httptest.NewRecorder()}
			tt.handler(sw)
			if sw.Status != tt.want {
				t.Errorf("Status %d, want %d", sw.Status, tt.want)
			}
		})
	}
	// http.ResponseController reaches the writer underneath.
	rec := httptest.NewRecorder()
	if err := http.NewResponseController(&Writer{ResponseWriter: rec}).Flush(); err != nil || !rec.Flushed {
		t.Errorf("Flush through the Writer: %v, flushed %v", err, rec.Flushed)
	}
}
