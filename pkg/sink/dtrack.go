package sink

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"

	"github.com/aibom-dev/aibom/api/v1alpha1"
)

// ProjectVersion is the version of every project the Dependency-Track sink
// makes: a project always holds the latest document of its workload.
const ProjectVersion = "live"

// DefaultClusterName is the first part of project names when the
// configuration names no cluster.
const DefaultClusterName = "cluster"

// DependencyTrack uploads documents with Dependency-Track's REST API
// (PUT /api/v1/bom, autoCreate), one project per workload, under a parent
// project per namespace or per cluster, which it creates when missing
// (PUT /api/v1/project). A delete deletes the workload's project.
//
// Names (docs/sinks.md): the workload's project is
// "<cluster>/<namespace>/<Kind>/<name>", the namespace's parent
// "<cluster>/<namespace>", the cluster's parent "<cluster>"; every version
// is ProjectVersion.
type DependencyTrack struct {
	SinkName string
	// BaseURL is the API server's base URL (without /api).
	BaseURL string
	Client  *http.Client
	APIKey  string
	// Parent is v1alpha1.ParentNamespace (default) or ParentCluster.
	Parent string
	// Cluster is the first part of project names (DefaultClusterName).
	Cluster string

	mu      sync.Mutex
	parents map[string]bool // parent projects known to exist
}

// Name implements Sink.
func (d *DependencyTrack) Name() string { return d.SinkName }

func (d *DependencyTrack) scrubber() *Scrubber { return NewScrubber(d.BaseURL) }

func (d *DependencyTrack) cluster() string {
	if d.Cluster == "" {
		return DefaultClusterName
	}
	return d.Cluster
}

// ProjectName is the project of an event's workload.
func (d *DependencyTrack) ProjectName(ev Event) string {
	return d.cluster() + "/" + ev.AIBOM.Namespace + "/" + ev.Subject.Kind + "/" + ev.Subject.Name
}

// ParentName is the parent project of an event's workload.
func (d *DependencyTrack) ParentName(ev Event) string {
	if d.Parent == v1alpha1.ParentCluster {
		return d.cluster()
	}
	return d.cluster() + "/" + ev.AIBOM.Namespace
}

// bomRequest is the body of PUT /api/v1/bom (Dependency-Track's
// BomSubmitRequest).
type bomRequest struct {
	ProjectName    string `json:"projectName"`
	ProjectVersion string `json:"projectVersion"`
	AutoCreate     bool   `json:"autoCreate"`
	ParentName     string `json:"parentName,omitempty"`
	ParentVersion  string `json:"parentVersion,omitempty"`
	Bom            string `json:"bom"`
}

// projectRequest is the body of PUT /api/v1/project.
type projectRequest struct {
	Name       string      `json:"name"`
	Version    string      `json:"version"`
	Classifier string      `json:"classifier"`
	Parent     *projectRef `json:"parent,omitempty"`
}

type projectRef struct {
	UUID string `json:"uuid"`
}

type project struct {
	UUID string `json:"uuid"`
}

// Deliver implements Sink.
func (d *DependencyTrack) Deliver(ctx context.Context, ev Event) (Receipt, error) {
	name := d.ProjectName(ev)
	// The base URL's origin only: a path or query of it may be a secret.
	loc := RedactURL(d.BaseURL) + "/api/v1/project/lookup?" + url.Values{"name": {name}, "version": {ProjectVersion}}.Encode()
	switch ev.Op {
	case OpWrite:
		if err := d.ensureParent(ctx, ev); err != nil {
			return Receipt{}, err
		}
		body, _ := json.Marshal(bomRequest{ProjectName: name, ProjectVersion: ProjectVersion, AutoCreate: true,
			ParentName: d.ParentName(ev), ParentVersion: ProjectVersion, Bom: base64.StdEncoding.EncodeToString(ev.Document)})
		resp, err := d.do(ctx, http.MethodPut, "/api/v1/bom", body)
		if err != nil {
			return Receipt{}, err
		}
		defer drain(resp)
		if err := readError(resp); err != nil {
			return Receipt{}, err
		}
		return Receipt{Location: loc}, nil
	case OpDelete:
		p, found, err := d.lookup(ctx, name)
		if err != nil || !found {
			return Receipt{}, err
		}
		resp, err := d.do(ctx, http.MethodDelete, "/api/v1/project/"+url.PathEscape(p.UUID), nil)
		if err != nil {
			return Receipt{}, err
		}
		defer drain(resp)
		if resp.StatusCode == http.StatusNotFound {
			return Receipt{}, nil
		}
		return Receipt{}, readError(resp)
	}
	return Receipt{}, Permanent("InvalidEvent", fmt.Errorf("unknown op %q", ev.Op))
}

// ensureParent makes sure the workload's parent project exists (and, for a
// namespace parent, the cluster project above it): Dependency-Track's
// autoCreate makes the project, not its parent. Parents found or made are
// remembered for the life of the process.
func (d *DependencyTrack) ensureParent(ctx context.Context, ev Event) error {
	chain := []string{d.cluster()}
	if d.Parent != v1alpha1.ParentCluster {
		chain = append(chain, d.ParentName(ev))
	}
	for i, name := range chain {
		d.mu.Lock()
		known := d.parents[name]
		d.mu.Unlock()
		if known {
			continue
		}
		_, found, err := d.lookup(ctx, name)
		if err != nil {
			return err
		}
		if !found {
			req := projectRequest{Name: name, Version: ProjectVersion, Classifier: "PLATFORM"}
			if i > 0 {
				up, ok, err := d.lookup(ctx, chain[i-1])
				if err != nil {
					return err
				}
				if ok {
					req.Parent = &projectRef{UUID: up.UUID}
				}
			}
			body, _ := json.Marshal(req)
			resp, err := d.do(ctx, http.MethodPut, "/api/v1/project", body)
			if err != nil {
				return err
			}
			err = readError(resp)
			drain(resp)
			if err != nil && resp.StatusCode != http.StatusConflict { // 409: made meanwhile
				return fmt.Errorf("create parent project %q: %w", name, err)
			}
		}
		d.mu.Lock()
		if d.parents == nil {
			d.parents = map[string]bool{}
		}
		d.parents[name] = true
		d.mu.Unlock()
	}
	return nil
}

// lookup finds a project by name (version ProjectVersion).
func (d *DependencyTrack) lookup(ctx context.Context, name string) (project, bool, error) {
	q := url.Values{"name": {name}, "version": {ProjectVersion}}
	resp, err := d.do(ctx, http.MethodGet, "/api/v1/project/lookup?"+q.Encode(), nil)
	if err != nil {
		return project{}, false, err
	}
	defer drain(resp)
	if resp.StatusCode == http.StatusNotFound {
		return project{}, false, nil
	}
	if err := readError(resp); err != nil {
		return project{}, false, fmt.Errorf("look up project %q: %w", name, err)
	}
	var p project
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&p); err != nil {
		return project{}, false, fmt.Errorf("look up project %q: %w", name, err)
	}
	return p, true, nil
}

func (d *DependencyTrack) do(ctx context.Context, method, path string, body []byte) (*http.Response, error) {
	var r io.Reader
	if body != nil {
		r = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, strings.TrimRight(d.BaseURL, "/")+path, r)
	if err != nil {
		return nil, Permanent("InvalidURL", errors.New("the Dependency-Track URL is not a valid URL"))
	}
	req.Header.Set("X-Api-Key", d.APIKey)
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := d.Client.Do(req)
	if err != nil {
		return nil, transportError(method+" "+RedactURL(d.BaseURL)+pathOnly(path), err)
	}
	return resp, nil
}

// pathOnly drops the query of an API path (a project name) from a message.
func pathOnly(p string) string {
	path, _, _ := strings.Cut(p, "?")
	return path
}
