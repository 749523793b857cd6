package riskapi_test

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	riskapi "github.com/riskapi/riskapi/sdk"
)

// testAPIKey is the only key the fake server accepts.
const testAPIKey = "rk_test_123"

// fixedTime stamps every resource of the fake so that examples print stable
// output.
var fixedTime = time.Date(2025, 1, 1, 9, 30, 0, 0, time.UTC)

// fakeServer is a small in-memory riskapi: the /v2 risk and attachment
// routes, problem+json errors, X-Request-Id, and Stripe-style idempotency
// (a 2xx outcome is stored per method, path and key, and replayed with
// Idempotent-Replayed: true; another body under the same key is 422). It
// records every request and lets a test inject faults per request.
type fakeServer struct {
	*httptest.Server

	mu          sync.Mutex
	requests    []recorded
	faults      []fault // consumed one per request, in order; nil entries pass
	risks       map[string]*riskapi.Risk
	order       []string
	attachments map[string]*storedAttachment
	attOrder    []string
	idem        map[string]storedResponse
	seq         int
	reqSeq      int
	pageSize    int
}

// recorded is one request as the server saw it.
type recorded struct {
	Method, Path, RawQuery string
	EscapedPath            string
	ContentLength          int64 // -1 when sent chunked
	Key                    string
	KeyHeaders             int // how many Idempotency-Key header lines
	Header                 http.Header
	Body                   []byte
}

type storedResponse struct {
	fingerprint string
	status      int
	contentType string
	body        []byte
}

type storedAttachment struct {
	meta  riskapi.Attachment
	bytes []byte
}

// fault replaces or wraps the handling of one request; next is the normal
// pipeline (idempotency layer and routes).
type fault func(w http.ResponseWriter, r *http.Request, next http.Handler)

func newFakeServer() *fakeServer {
	f := &fakeServer{
		risks:       map[string]*riskapi.Risk{},
		attachments: map[string]*storedAttachment{},
		idem:        map[string]storedResponse{},
		pageSize:    2,
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v2/risks", f.createRisk)
	mux.HandleFunc("GET /v2/risks", f.listRisks)
	mux.HandleFunc("GET /v2/risks/{id}", f.getRisk)
	mux.HandleFunc("PATCH /v2/risks/{id}", f.patchRisk)
	mux.HandleFunc("PUT /v2/risks/{id}", f.putRisk)
	mux.HandleFunc("DELETE /v2/risks/{id}", f.deleteRisk)
	mux.HandleFunc("POST /v2/risks/{id}/attachments", f.uploadAttachment)
	mux.HandleFunc("GET /v2/risks/{id}/attachments", f.listAttachments)
	mux.HandleFunc("GET /v2/attachments/{id}/content", f.downloadAttachment)
	pipeline := f.idempotency(mux)
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		f.mu.Lock()
		f.reqSeq++
		reqID := fmt.Sprintf("req_%d", f.reqSeq)
		f.requests = append(f.requests, recorded{
			Method: r.Method, Path: r.URL.Path, RawQuery: r.URL.RawQuery,
			EscapedPath: r.URL.EscapedPath(), ContentLength: r.ContentLength,
			Key: r.Header.Get("Idempotency-Key"), KeyHeaders: len(r.Header.Values("Idempotency-Key")),
			Header: r.Header.Clone(), Body: body,
		})
		var flt fault
		if len(f.faults) > 0 {
			flt, f.faults = f.faults[0], f.faults[1:]
		}
		f.mu.Unlock()
		w.Header().Set("X-Request-Id", reqID)
		if r.Header.Get("Authorization") != "Bearer "+testAPIKey {
			writeProblem(w, http.StatusUnauthorized, "UNAUTHENTICATED", "missing or bad API key")
			return
		}
		if flt != nil {
			flt(w, r, pipeline)
			return
		}
		pipeline.ServeHTTP(w, r)
	}))
	return f
}

// inject queues faults for the next requests, in order; a nil fault lets
// its request through untouched.
func (f *fakeServer) inject(faults ...fault) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.faults = append(f.faults, faults...)
}

func (f *fakeServer) recorded() []recorded {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.requests)
}

func (f *fakeServer) riskCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.risks)
}

func (f *fakeServer) attachmentCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.attachments)
}

// status answers with a problem of the given status and code, and a
// Retry-After header when retryAfter is not empty, without running the request.
func status(code int, problemCode, retryAfter string) fault {
	return func(w http.ResponseWriter, r *http.Request, next http.Handler) {
		if retryAfter != "" {
			w.Header().Set("Retry-After", retryAfter)
		}
		writeProblem(w, code, problemCode, "injected")
	}
}

// lostCommit runs the request to completion (so the server stores its outcome),
// then answers 503 STORE_UNAVAILABLE with outcome instead: what riskapi says when
// its database connection died during the COMMIT ("unknown"), or what a server
// that lied would say ("not_executed").
func lostCommit(outcome string) fault {
	return func(w http.ResponseWriter, r *http.Request, next http.Handler) {
		next.ServeHTTP(httptest.NewRecorder(), r)
		w.Header().Set("Retry-After", "1")
		w.Header().Set("Content-Type", "application/problem+json")
		w.WriteHeader(http.StatusServiceUnavailable)
		json.NewEncoder(w).Encode(map[string]any{"type": "https://riskapi.dev/problems/store-unavailable",
			"title": "Store unavailable", "status": 503, "detail": "injected", "code": "STORE_UNAVAILABLE", "outcome": outcome})
	}
}

// cutAfterAnswer runs the request to completion (so the server stores its
// outcome), then closes the connection instead of sending the response: the
// client sees a network error after the server has acted.
func cutAfterAnswer() fault {
	return func(w http.ResponseWriter, r *http.Request, next http.Handler) {
		rec := httptest.NewRecorder()
		next.ServeHTTP(rec, r)
		hijackClose(w, nil)
	}
}

// cutMidBody runs the request, then sends the status line, the headers and
// half of the body before closing the connection.
func cutMidBody() fault {
	return func(w http.ResponseWriter, r *http.Request, next http.Handler) {
		rec := httptest.NewRecorder()
		next.ServeHTTP(rec, r)
		body := rec.Body.Bytes()
		var raw bytes.Buffer
		fmt.Fprintf(&raw, "HTTP/1.1 %d %s\r\n", rec.Code, http.StatusText(rec.Code))
		fmt.Fprintf(&raw, "Content-Type: application/json\r\nContent-Length: %d\r\n\r\n", len(body))
		raw.Write(body[:len(body)/2])
		hijackClose(w, raw.Bytes())
	}
}

// hijackClose takes over the connection, writes raw (if any) and closes it.
func hijackClose(w http.ResponseWriter, raw []byte) {
	conn, buf, err := http.NewResponseController(w).Hijack()
	if err != nil {
		panic(err)
	}
	if raw != nil {
		buf.Write(raw)
		buf.Flush()
	}
	conn.Close()
}

func writeProblem(w http.ResponseWriter, status int, code, detail string, fields ...map[string]string) {
	p := map[string]any{
		"type":      "https://riskapi.dev/problems/" + strings.ToLower(strings.ReplaceAll(code, "_", "-")),
		"title":     http.StatusText(status),
		"status":    status,
		"detail":    detail,
		"code":      code,
		"requestId": w.Header().Get("X-Request-Id"),
	}
	if len(fields) > 0 {
		p["errors"] = fields
	}
	w.Header().Set("Content-Type", "application/problem+json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(p)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

// idempotency is the fake's version of the server's idempotency layer.
func (f *fakeServer) idempotency(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key := strings.TrimSpace(r.Header.Get("Idempotency-Key"))
		if key == "" || r.Method == http.MethodGet {
			next.ServeHTTP(w, r)
			return
		}
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		sum := sha256.Sum256(append([]byte(r.Method+" "+r.URL.RequestURI()+"\n"), body...))
		fp := hex.EncodeToString(sum[:])
		recordKey := r.Method + " " + r.URL.Path + " " + key
		f.mu.Lock()
		stored, ok := f.idem[recordKey]
		f.mu.Unlock()
		if ok {
			if stored.fingerprint != fp {
				writeProblem(w, http.StatusUnprocessableEntity, "IDEMPOTENCY_KEY_REUSED", "this key was used with another request")
				return
			}
			if stored.contentType != "" {
				w.Header().Set("Content-Type", stored.contentType)
			}
			w.Header().Set("Idempotent-Replayed", "true")
			w.WriteHeader(stored.status)
			w.Write(stored.body)
			return
		}
		rec := httptest.NewRecorder()
		next.ServeHTTP(rec, r)
		if rec.Code >= 200 && rec.Code < 300 {
			f.mu.Lock()
			f.idem[recordKey] = storedResponse{fp, rec.Code, rec.Header().Get("Content-Type"), rec.Body.Bytes()}
			f.mu.Unlock()
		}
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		w.Header().Set("Idempotent-Replayed", "false")
		w.WriteHeader(rec.Code)
		w.Write(rec.Body.Bytes())
	})
}

// riskFields is the writable part of a risk on the wire; pointers tell
// "absent" from a value, json.RawMessage tells null from absent for PATCH.
type riskFields struct {
	Title       *string                  `json:"title"`
	Description *string                  `json:"description"`
	Category    *string                  `json:"category"`
	Likelihood  json.RawMessage          `json:"likelihood"`
	Impact      json.RawMessage          `json:"impact"`
	RiskScore   json.RawMessage          `json:"riskScore"`
	Status      *riskapi.RiskStatus      `json:"status"`
	Owner       *riskapi.RiskOwnerParams `json:"owner"`
}

// apply writes the given fields onto r; for PUT and POST, r starts blank.
func (in *riskFields) apply(r *riskapi.Risk) {
	if in.Title != nil {
		r.Title = *in.Title
	}
	if in.Description != nil {
		r.Description = *in.Description
	}
	if in.Category != nil {
		r.Category = *in.Category
	}
	num := func(dst **int, raw json.RawMessage) {
		switch {
		case raw == nil:
		case string(raw) == "null":
			*dst = nil
		default:
			var v int
			json.Unmarshal(raw, &v)
			*dst = &v
		}
	}
	num(&r.Likelihood, in.Likelihood)
	num(&r.Impact, in.Impact)
	num(&r.RiskScore, in.RiskScore)
	if in.Status != nil {
		r.Status = *in.Status
	}
	if in.Owner != nil {
		// as the server: a user owner's name is their email, which the fake
		// does not know, so it shows the id
		o := &riskapi.RiskOwner{UserID: in.Owner.UserID}
		if in.Owner.Name != nil {
			o.Name = *in.Owner.Name
		} else if o.UserID != nil {
			o.Name = *o.UserID + "@example.com"
		}
		r.Owner = o
	}
	if r.Owner == nil {
		r.Owner = &riskapi.RiskOwner{}
	}
	if in.RiskScore == nil && r.Likelihood != nil && r.Impact != nil && (in.Likelihood != nil || in.Impact != nil) {
		s := *r.Likelihood * *r.Impact
		r.RiskScore = &s
	}
}

func decodeFields(w http.ResponseWriter, r *http.Request) (*riskFields, bool) {
	var in riskFields
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
		writeProblem(w, http.StatusBadRequest, "VALIDATION_FAILED", "body: "+err.Error())
		return nil, false
	}
	return &in, true
}

func (f *fakeServer) createRisk(w http.ResponseWriter, r *http.Request) {
	in, ok := decodeFields(w, r)
	if !ok {
		return
	}
	if in.Title == nil || *in.Title == "" {
		writeProblem(w, http.StatusBadRequest, "VALIDATION_FAILED", "title: is required",
			map[string]string{"field": "title", "detail": "is required"})
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.seq++
	risk := &riskapi.Risk{ID: fmt.Sprintf("risk_%d", f.seq), Status: riskapi.RiskStatusOpen, CreatedAt: fixedTime, UpdatedAt: fixedTime}
	in.apply(risk)
	f.risks[risk.ID] = risk
	f.order = append(f.order, risk.ID)
	w.Header().Set("Location", "/v2/risks/"+risk.ID)
	writeJSON(w, http.StatusCreated, risk)
}

func (f *fakeServer) listRisks(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	limit := f.pageSize
	if l := r.URL.Query().Get("limit"); l != "" {
		limit, _ = strconv.Atoi(l)
	}
	start := 0
	if c := r.URL.Query().Get("cursor"); c != "" {
		n, err := strconv.Atoi(strings.TrimPrefix(c, "cur_"))
		if err != nil || n < 0 || n > len(f.order) {
			writeProblem(w, http.StatusBadRequest, "VALIDATION_FAILED", "cursor: malformed")
			return
		}
		start = n
	}
	end := min(start+limit, len(f.order))
	page := []*riskapi.Risk{}
	for _, id := range f.order[start:end] {
		page = append(page, f.risks[id])
	}
	var next *string
	if end < len(f.order) {
		c := fmt.Sprintf("cur_%d", end)
		next = &c
	}
	writeJSON(w, http.StatusOK, map[string]any{"data": page, "hasMore": next != nil, "nextCursor": next})
}

func (f *fakeServer) lookup(w http.ResponseWriter, r *http.Request) *riskapi.Risk {
	risk, ok := f.risks[r.PathValue("id")]
	if !ok {
		writeProblem(w, http.StatusNotFound, "NOT_FOUND", "risk not found")
		return nil
	}
	return risk
}

func (f *fakeServer) getRisk(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if risk := f.lookup(w, r); risk != nil {
		writeJSON(w, http.StatusOK, risk)
	}
}

func (f *fakeServer) patchRisk(w http.ResponseWriter, r *http.Request) {
	in, ok := decodeFields(w, r)
	if !ok {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if risk := f.lookup(w, r); risk != nil {
		in.apply(risk)
		writeJSON(w, http.StatusOK, risk)
	}
}

func (f *fakeServer) putRisk(w http.ResponseWriter, r *http.Request) {
	in, ok := decodeFields(w, r)
	if !ok {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if old := f.lookup(w, r); old != nil {
		risk := &riskapi.Risk{ID: old.ID, Status: riskapi.RiskStatusOpen, CreatedAt: old.CreatedAt, UpdatedAt: fixedTime}
		in.apply(risk)
		f.risks[risk.ID] = risk
		writeJSON(w, http.StatusOK, risk)
	}
}

func (f *fakeServer) deleteRisk(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if risk := f.lookup(w, r); risk != nil {
		delete(f.risks, risk.ID)
		f.order = slices.DeleteFunc(f.order, func(id string) bool { return id == risk.ID })
		w.WriteHeader(http.StatusNoContent)
	}
}

func (f *fakeServer) uploadAttachment(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	_, ok := f.risks[r.PathValue("id")]
	f.mu.Unlock()
	if !ok {
		writeProblem(w, http.StatusNotFound, "NOT_FOUND", "risk not found")
		return
	}
	mr, err := r.MultipartReader()
	if err != nil {
		writeProblem(w, http.StatusBadRequest, "VALIDATION_FAILED", "body: "+err.Error())
		return
	}
	var (
		meta    riskapi.Attachment
		content []byte
		gotFile bool
	)
	for {
		part, err := mr.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			writeProblem(w, http.StatusBadRequest, "VALIDATION_FAILED", "body: "+err.Error())
			return
		}
		b, _ := io.ReadAll(bufio.NewReader(part))
		switch part.FormName() {
		case "file":
			gotFile = true
			content = b
			meta.Filename = part.FileName()
			meta.ContentType = part.Header.Get("Content-Type")
		case "description":
			meta.Description = string(b)
		}
	}
	if !gotFile {
		writeProblem(w, http.StatusBadRequest, "VALIDATION_FAILED", "file: is required",
			map[string]string{"field": "file", "detail": "is required"})
		return
	}
	sum := sha256.Sum256(content)
	f.mu.Lock()
	defer f.mu.Unlock()
	f.seq++
	meta.ID = fmt.Sprintf("att_%d", f.seq)
	meta.RiskID = r.PathValue("id")
	meta.Size = int64(len(content))
	meta.SHA256 = hex.EncodeToString(sum[:])
	meta.CreatedAt = fixedTime
	f.attachments[meta.ID] = &storedAttachment{meta: meta, bytes: content}
	f.attOrder = append(f.attOrder, meta.ID)
	writeJSON(w, http.StatusCreated, meta)
}

func (f *fakeServer) listAttachments(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.lookup(w, r) == nil {
		return
	}
	data := []riskapi.Attachment{}
	for _, id := range f.attOrder {
		if a := f.attachments[id]; a.meta.RiskID == r.PathValue("id") {
			data = append(data, a.meta)
		}
	}
	// Like the contract's attachment list: an envelope without paging.
	writeJSON(w, http.StatusOK, map[string]any{"data": data})
}

func (f *fakeServer) downloadAttachment(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	a, ok := f.attachments[r.PathValue("id")]
	f.mu.Unlock()
	if !ok {
		writeProblem(w, http.StatusNotFound, "NOT_FOUND", "attachment not found")
		return
	}
	w.Header().Set("Content-Type", a.meta.ContentType)
	w.Header().Set("Content-Length", strconv.Itoa(len(a.bytes)))
	w.Write(a.bytes)
}
