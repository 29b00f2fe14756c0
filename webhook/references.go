package webhook

import (
	"net/http"
	"strings"
	"sync"

	"github.com/kartalua/karta/interpreter"
)

// maxWarnings caps the Warning headers of one answer.
const maxWarnings = 10

// referenceWarnings are the references one request's hooks could not
// resolve, each once, in order.
type referenceWarnings struct {
	mu   sync.Mutex
	list []string
	seen map[string]bool
}

func (r *referenceWarnings) add(w interpreter.ReferenceWarning) {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := w.String()
	if r.seen[s] || len(r.list) == maxWarnings {
		return
	}
	if r.seen == nil {
		r.seen = map[string]bool{}
	}
	r.seen[s] = true
	r.list = append(r.list, s)
}

// header adds a Warning header per warning, as the API server writes
// them (RFC 9111 syntax, code 299: a persistent warning).
func (r *referenceWarnings) header(h http.Header) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, s := range r.list {
		s = strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", " ").Replace(s)
		h.Add("Warning", `299 karta "`+s+`"`)
	}
}
