package sink

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/types"

	"github.com/aibom-dev/aibom/api/v1alpha1"
)

// fakeDependencyTrack validates requests against Dependency-Track's
// documented REST API (v4): the API key header, methods, paths and fields;
// anything else is answered 400 and recorded as a violation.
type fakeDependencyTrack struct {
	key        string
	mu         sync.Mutex
	projects   map[string]string // name@version -> uuid
	parents    map[string]string // project name -> parent name
	boms       map[string][]byte // project name -> last BOM
	violations []string
	deleted    []string
}

func newFakeDependencyTrack(key string) *fakeDependencyTrack {
	return &fakeDependencyTrack{key: key, projects: map[string]string{}, parents: map[string]string{}, boms: map[string][]byte{}}
}

func (f *fakeDependencyTrack) violate(w http.ResponseWriter, format string, args ...any) {
	f.violations = append(f.violations, fmt.Sprintf(format, args...))
	w.WriteHeader(http.StatusBadRequest)
}

func (f *fakeDependencyTrack) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if r.Header.Get("X-Api-Key") != f.key {
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	switch {
	case r.Method == http.MethodGet && r.URL.Path == "/api/v1/project/lookup":
		name, version := r.URL.Query().Get("name"), r.URL.Query().Get("version")
		uuid, ok := f.projects[name+"@"+version]
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
		uuid := fmt.Sprintf("uuid-%d", len(f.projects)+1)
		f.projects[p.Name+"@"+p.Version] = uuid
		if p.Parent != nil {
			for k, v := range f.projects {
				if v == p.Parent.UUID {
					f.parents[p.Name] = k
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
		if _, ok := f.projects[parent+"@"+parentVersion]; parent != "" && !ok {
			w.WriteHeader(http.StatusNotFound) // as Dependency-Track does for a missing parent
			return
		}
		if _, ok := f.projects[name+"@"+version]; !ok {
			f.projects[name+"@"+version] = fmt.Sprintf("uuid-%d", len(f.projects)+1)
		}
		f.parents[name] = parent + "@" + parentVersion
		f.boms[name] = bom
		_ = json.NewEncoder(w).Encode(map[string]any{"token": "t-1"})
	case r.Method == http.MethodDelete && len(r.URL.Path) > len("/api/v1/project/"):
		uuid := r.URL.Path[len("/api/v1/project/"):]
		for k, v := range f.projects {
			if v == uuid {
				delete(f.projects, k)
				f.deleted = append(f.deleted, k)
				w.WriteHeader(http.StatusNoContent)
				return
			}
		}
		w.WriteHeader(http.StatusNotFound)
	default:
		f.violate(w, "unexpected %s %s", r.Method, r.URL.Path)
	}
}

func TestDependencyTrackUploadsOneProjectPerWorkloadUnderItsNamespace(t *testing.T) {
	fake := newFakeDependencyTrack("api-key")
	srv := httptest.NewTLSServer(fake)
	defer srv.Close()
	c, err := NewHTTPClient(TLSOptions{CABundle: pemOf(srv.Certificate())})
	require.NoError(t, err)
	d := &DependencyTrack{SinkName: "dt", BaseURL: srv.URL, Client: c, APIKey: "api-key", Cluster: "prod"}
	doc := []byte(`{"bomFormat":"CycloneDX","specVersion":"1.6"}`)
	e := Event{Op: OpWrite, AIBOM: types.NamespacedName{Namespace: "team", Name: "deployment-vllm"}, Subject: Subject{Kind: "Deployment", Name: "vllm"}, Document: doc, SHA256: "s"}
	rec, err := d.Deliver(context.Background(), e)
	require.NoError(t, err)
	require.Empty(t, fake.violations)
	require.Contains(t, rec.Location, "/api/v1/project/lookup?name=prod%2Fteam%2FDeployment%2Fvllm&version=live")
	require.Equal(t, doc, fake.boms["prod/team/Deployment/vllm"])
	require.Equal(t, "prod/team@live", fake.parents["prod/team/Deployment/vllm"])
	require.Equal(t, "prod@live", fake.parents["prod/team"], "the namespace's project sits under the cluster's")
	// Idempotent: a redelivery uploads again into the same project.
	_, err = d.Deliver(context.Background(), e)
	require.NoError(t, err)
	require.Len(t, fake.projects, 3)
	// A delete deletes the workload's project, not its parents.
	_, err = d.Deliver(context.Background(), Event{Op: OpDelete, AIBOM: e.AIBOM, Subject: e.Subject})
	require.NoError(t, err)
	require.Equal(t, []string{"prod/team/Deployment/vllm@live"}, fake.deleted)
	require.Empty(t, fake.violations)

	// A wrong key is refused, permanently.
	_, err = (&DependencyTrack{SinkName: "dt", BaseURL: srv.URL, Client: c, APIKey: "wrong", Parent: v1alpha1.ParentCluster}).Deliver(context.Background(), e)
	require.True(t, IsPermanent(err), "%v", err)
}

func TestDependencyTrackClusterParent(t *testing.T) {
	fake := newFakeDependencyTrack("k")
	srv := httptest.NewServer(fake)
	defer srv.Close()
	d := &DependencyTrack{SinkName: "dt", BaseURL: srv.URL, Client: http.DefaultClient, APIKey: "k", Parent: v1alpha1.ParentCluster}
	_, err := d.Deliver(context.Background(), Event{Op: OpWrite, AIBOM: types.NamespacedName{Namespace: "a", Name: "x"}, Subject: Subject{Kind: "Job", Name: "x"}, Document: []byte(`{}`), SHA256: "s"})
	require.NoError(t, err)
	require.Empty(t, fake.violations)
	require.Equal(t, "cluster@live", fake.parents["cluster/a/Job/x"])
}
