package serve

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/crystallize-dev/crystallize/internal/registry"
)

// The agents API is the session tools over plain HTTP with JSON, for an
// agent that speaks no MCP (a script, a CI job): the same operations on
// the same registry.Agents, so the same bounds and refusals.
//
//	POST /v1/sessions                          {agent, model?, branch?, cwd?} → 201 {session_id}
//	POST /v1/sessions/{id}/questions           {question, options, default?, timeout_seconds?} → 201 {item, state}
//	GET  /v1/sessions/{id}/questions/{item}    → 200 {item, state, option?, by?, reason?, answered_at?}
//	POST /v1/sessions/{id}/end                 {status} → 200 {session_id, status}
//
// Every request carries "Authorization: Bearer TOKEN": the API posts into
// a person's inbox, and a loopback port is reachable by every local user
// and, through a browser, by any web page (a page cannot set that header
// without a CORS preflight, which the API does not answer). A refusal is
// 400 with {"error"}; a missing or wrong token 401.
//
// There is no connection whose end says the agent is gone, so a session
// of the API is live by its calls: each renews its heartbeat, and it
// turns stale StaleAfter after the last one. An agent that waits for an
// answer polls its question, which keeps it live.

// MaxAPIBody bounds a request body of the agents API: a question at its
// bounds (4096 bytes, 16 options of 200) fits several times over.
const MaxAPIBody = 64 << 10

// AgentsAPI returns the handler of the agents API on a, for requests
// that carry token.
func AgentsAPI(a *registry.Agents, token string) http.Handler {
	mux := http.NewServeMux()
	api := &agentsAPI{a: a}
	mux.HandleFunc("POST /v1/sessions", api.register)
	mux.HandleFunc("POST /v1/sessions/{id}/questions", api.ask)
	mux.HandleFunc("GET /v1/sessions/{id}/questions/{item}", api.check)
	mux.HandleFunc("POST /v1/sessions/{id}/end", api.end)
	want := []byte("Bearer " + token)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got := []byte(r.Header.Get("Authorization"))
		if token == "" || subtle.ConstantTimeCompare(got, want) != 1 {
			w.Header().Set("WWW-Authenticate", "Bearer")
			apiError(w, http.StatusUnauthorized, "missing or wrong token: send Authorization: Bearer TOKEN")
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, MaxAPIBody)
		mux.ServeHTTP(w, r)
	})
}

type agentsAPI struct{ a *registry.Agents }

func (api *agentsAPI) register(w http.ResponseWriter, r *http.Request) {
	var in RegisterArgs
	if !decodeBody(w, r, &in) {
		return
	}
	id, err := api.a.Register(r.Context(), registry.Agent{Name: in.Agent, Model: in.Model, Branch: in.Branch, Workspace: in.Cwd})
	if err != nil {
		refusal(w, err)
		return
	}
	api.a.Release(id) // live by its calls, not by a connection
	reply(w, http.StatusCreated, RegisterResult{SessionID: id})
}

func (api *agentsAPI) ask(w http.ResponseWriter, r *http.Request) {
	var in AskArgs
	if !decodeBody(w, r, &in) {
		return
	}
	id := r.PathValue("id")
	if in.TimeoutSeconds < 0 || in.TimeoutSeconds > int64(registry.MaxTimeout/time.Second) {
		apiError(w, http.StatusBadRequest, fmt.Sprintf("timeout_seconds %d: want 0 (none) up to %d", in.TimeoutSeconds, int64(registry.MaxTimeout/time.Second)))
		return
	}
	item, err := api.a.Ask(r.Context(), id, registry.Question{Text: in.Question, Options: in.Options, Default: in.Default,
		Timeout: time.Duration(in.TimeoutSeconds) * time.Second})
	api.a.Release(id)
	if err != nil {
		refusal(w, err)
		return
	}
	reply(w, http.StatusCreated, AskResult{Item: item, State: registry.ReplyPending})
}

func (api *agentsAPI) check(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	item, err := strconv.ParseInt(r.PathValue("item"), 10, 64)
	if err != nil || item <= 0 {
		apiError(w, http.StatusBadRequest, fmt.Sprintf("item %q: want an inbox item id", r.PathValue("item")))
		return
	}
	rep, err := api.a.Poll(r.Context(), id, item)
	api.a.Release(id)
	if err != nil {
		refusal(w, err)
		return
	}
	reply(w, http.StatusOK, rep)
}

func (api *agentsAPI) end(w http.ResponseWriter, r *http.Request) {
	var in struct {
		Status string `json:"status"`
	}
	if !decodeBody(w, r, &in) {
		return
	}
	id := r.PathValue("id")
	if err := api.a.End(r.Context(), id, in.Status); err != nil {
		api.a.Release(id)
		refusal(w, err)
		return
	}
	reply(w, http.StatusOK, EndResult{SessionID: id, Status: in.Status})
}

// decodeBody reads one JSON object of known fields from r's body, or
// answers 400 (413 for a body over MaxAPIBody) and returns false.
func decodeBody(w http.ResponseWriter, r *http.Request, v any) bool {
	dec := json.NewDecoder(r.Body)
	dec.DisallowUnknownFields()
	err := dec.Decode(v)
	if err == nil && dec.Decode(&struct{}{}) != io.EOF {
		err = errors.New("more than one JSON value")
	}
	var tooBig *http.MaxBytesError
	switch {
	case errors.As(err, &tooBig):
		apiError(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("body over %d bytes", MaxAPIBody))
		return false
	case err != nil:
		apiError(w, http.StatusBadRequest, "body: "+err.Error())
		return false
	}
	return true
}

func refusal(w http.ResponseWriter, err error) {
	if errors.Is(err, registry.ErrRefused) {
		apiError(w, http.StatusBadRequest, err.Error())
		return
	}
	apiError(w, http.StatusInternalServerError, err.Error())
}

func apiError(w http.ResponseWriter, status int, msg string) {
	reply(w, status, map[string]string{"error": msg})
}

func reply(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

// ListenAgentsAPI serves h at addr until ctx is done; listening reports
// the address (the port chosen for ":0") before the first request.
func ListenAgentsAPI(ctx context.Context, addr string, h http.Handler, listening func(net.Addr)) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	hs := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 30 * time.Second}
	if listening != nil {
		listening(ln.Addr())
	}
	go func() {
		<-ctx.Done()
		hs.Close()
	}()
	if err := hs.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
