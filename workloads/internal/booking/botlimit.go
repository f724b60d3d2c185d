package booking

import (
	"net/http"
	"strings"

	"github.com/ticketfair/ticketfair/workloads/internal/httpapi"
	"github.com/ticketfair/ticketfair/workloads/internal/ratelimit"
)

// holdLimited counts a hold against the hold limits of its customer and
// client network before h runs, so a flood of holds is refused before it
// costs the session check or a transaction. The customer is the verified
// access token's subject (a signature check, no I/O); a request without a
// valid token goes on to h, which refuses it.
func (s *service) holdLimited(h httpapi.HandlerFunc) httpapi.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		if s.limits == nil {
			return h(w, r)
		}
		tok := strings.TrimSpace(r.Header.Get(QueueTokenHeader))
		if tok == "" {
			return h(w, r)
		}
		c, err := s.keys.verify(r.Context(), tok, s.cfg.EventID)
		if err != nil {
			return h(w, r)
		}
		if err := s.limits.Check(r.Context(), ratelimit.Hold, c.Customer(), "", r); err != nil {
			return err
		}
		return h(w, r)
	}
}
