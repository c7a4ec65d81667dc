// Package dtracktest is a loopback stand-in for Dependency-Track's REST API
// (v4) that validates every request against the documented API: the
// X-Api-Key header, methods, paths and fields. Tests of the
// Dependency-Track sink use it.
package dtracktest

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
)

// Server validates requests against Dependency-Track's
// documented REST API (v4): the API key header, methods, paths and fields;
// anything else is answered 400 and recorded as a violation.
type Server struct {
	key string
	// Mu guards the fields below: lock it to read them while the server runs.
	Mu sync.Mutex
	// Projects maps name@version to uuid; Parents a project's name to its
	// parent's name@version; BOMs a project's name to its last BOM;
	// Violations lists the requests that did not match the API; Deleted
	// the projects deleted (name@version).
	Projects   map[string]string
	Parents    map[string]string // project name -> parent name
	BOMs       map[string][]byte // project name -> last BOM
	Violations []string
	Deleted    []string
}

// NewServer returns a server that accepts the API key key.
func NewServer(key string) *Server {
	return &Server{key: key, Projects: map[string]string{}, Parents: map[string]string{}, BOMs: map[string][]byte{}}
}

func (f *Server) violate(w http.ResponseWriter, format string, args ...any) {
	f.Violations = append(f.Violations, fmt.Sprintf(format, args...))
	w.WriteHeader(http.StatusBadRequest)
}

// ServeHTTP implements http.Handler.
func (f *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.Mu.Lock()
	defer f.Mu.Unlock()
	if r.Header.Get("X-Api-Key") != f.key {
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	switch {
	case r.Method == http.MethodGet && r.URL.Path == "/api/v1/project/lookup":
		name, version := r.URL.Query().Get("name"), r.URL.Query().Get("version")
		uuid, ok := f.Projects[name+"@"+version]
		if !ok {
			w.WriteHeader(http.StatusNotFound)
			return
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"uuid": uuid, "name": name, "version": version})
	case r.Method == http.MethodPut && r.URL.Path == "/api/v1/project":
		if r.Header.Get("Content-Type") != "application/json" {
			f.violate(w, "project: content type %q", r.Header.Get("Content-Type"))
			return
		}
		var p struct {
			Name, Version, Classifier string
			Parent                    *struct{ UUID string }
		}
		if err := json.NewDecoder(r.Body).Decode(&p); err != nil || p.Name == "" || p.Classifier == "" {
			f.violate(w, "project: bad body %v %+v", err, p)
			return
		}
		uuid := fmt.Sprintf("uuid-%d", len(f.Projects)+1)
		f.Projects[p.Name+"@"+p.Version] = uuid
		if p.Parent != nil {
			for k, v := range f.Projects {
				if v == p.Parent.UUID {
					f.Parents[p.Name] = k
				}
			}
		}
		w.WriteHeader(http.StatusCreated)
		_ = json.NewEncoder(w).Encode(map[string]any{"uuid": uuid})
	case r.Method == http.MethodPut && r.URL.Path == "/api/v1/bom":
		if r.Header.Get("Content-Type") != "application/json" {
			f.violate(w, "bom: content type %q", r.Header.Get("Content-Type"))
			return
		}
		var b map[string]any
		if err := json.NewDecoder(r.Body).Decode(&b); err != nil {
			f.violate(w, "bom: %v", err)
			return
		}
		for k := range b {
			switch k {
			case "projectName", "projectVersion", "autoCreate", "parentName", "parentVersion", "bom":
			default:
				f.violate(w, "bom: field %q is not part of BomSubmitRequest as used", k)
				return
			}
		}
		name, _ := b["projectName"].(string)
		version, _ := b["projectVersion"].(string)
		auto, _ := b["autoCreate"].(bool)
		parent, _ := b["parentName"].(string)
		parentVersion, _ := b["parentVersion"].(string)
		bom, err := base64.StdEncoding.DecodeString(fmt.Sprint(b["bom"]))
		if name == "" || version == "" || !auto || err != nil || !json.Valid(bom) {
			f.violate(w, "bom: name %q version %q autoCreate %v bom valid %v", name, version, auto, err == nil && json.Valid(bom))
			return
		}
		if _, ok := f.Projects[parent+"@"+parentVersion]; parent != "" && !ok {
			w.WriteHeader(http.StatusNotFound) // as Dependency-Track does for a missing parent
			return
		}
		if _, ok := f.Projects[name+"@"+version]; !ok {
			f.Projects[name+"@"+version] = fmt.Sprintf("uuid-%d", len(f.Projects)+1)
		}
		f.Parents[name] = parent + "@" + parentVersion
		f.BOMs[name] = bom
		_ = json.NewEncoder(w).Encode(map[string]any{"token": "t-1"})
	case r.Method == http.MethodDelete && len(r.URL.Path) > len("/api/v1/project/"):
		uuid := r.URL.Path[len("/api/v1/project/"):]
		for k, v := range f.Projects {
			if v == uuid {
				delete(f.Projects, k)
				f.Deleted = append(f.Deleted, k)
				w.WriteHeader(http.StatusNoContent)
				return
			}
		}
		w.WriteHeader(http.StatusNotFound)
	default:
		f.violate(w, "unexpected %s %s", r.Method, r.URL.Path)
	}
}
