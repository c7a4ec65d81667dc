// Package compact holds an object of the cluster in less memory than an
// unstructured object: its metadata decoded, the rest as JSON, decoded again
// when it is read. The watches keep tracked workloads in this form.
package compact

import (
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strconv"
	"sync"
	"unicode/utf8"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	utiljson "k8s.io/apimachinery/pkg/util/json"
)

// Object is the form in which a kind's cache holds a whole object of a
// tracked or referenced kind. An unstructured object costs about three
// times its JSON in the heap (a map per JSON object, a boxed value per
// field, a string per key); most of it is read only when a reconcile scrapes
// the object. An Object keeps:
//
//   - the object's metadata, decoded: what the event handlers, the cache's
//     indexes and the admission filter read, through the usual accessors;
//   - the whole transformed object as JSON, which the Store decodes into a
//     new *unstructured.Unstructured on every read (Unstructured).
//
// The JSON is never changed once made and is not reachable from outside
// this package: a reader gets its own decoded copy, and a DeepCopy shares
// the bytes. The metadata is the informer's, as the fields of an
// unstructured object in the cache were: handlers must not change it.
type Object struct {
	metav1.TypeMeta
	metav1.ObjectMeta
	// raw is the transformed object's JSON, numbers written so that they
	// decode to the same Go types (int64 or float64) as before.
	raw []byte
}

// New returns the compact form of an object (the watches give it the
// transformed one). Unstructured returns an object equal to u, value types
// included. A value JSON cannot hold (NaN, infinities, a func) is an error.
func New(u *unstructured.Unstructured) (*Object, error) {
	scratch := scratchBuffers.Get().(*[]byte)
	defer scratchBuffers.Put(scratch)
	out, err := appendJSON((*scratch)[:0], u.Object, 0)
	if err != nil {
		return nil, fmt.Errorf("compact %s %s/%s: %w", u.GetKind(), u.GetNamespace(), u.GetName(), err)
	}
	*scratch = out
	// Exactly sized: the cache keeps it for the object's lifetime.
	raw := append([]byte(nil), out...)
	return &Object{
		TypeMeta: metav1.TypeMeta{APIVersion: u.GetAPIVersion(), Kind: u.GetKind()},
		ObjectMeta: metav1.ObjectMeta{
			Name:                       u.GetName(),
			GenerateName:               u.GetGenerateName(),
			Namespace:                  u.GetNamespace(),
			UID:                        u.GetUID(),
			ResourceVersion:            u.GetResourceVersion(),
			Generation:                 u.GetGeneration(),
			CreationTimestamp:          u.GetCreationTimestamp(),
			DeletionTimestamp:          u.GetDeletionTimestamp(),
			DeletionGracePeriodSeconds: u.GetDeletionGracePeriodSeconds(),
			Labels:                     u.GetLabels(),
			Annotations:                u.GetAnnotations(),
			OwnerReferences:            u.GetOwnerReferences(),
			Finalizers:                 u.GetFinalizers(),
		},
		raw: raw,
	}, nil
}

// scratchBuffers hold the JSON of an object being compacted: the cache
// keeps an exactly sized copy, the buffer is reused.
var scratchBuffers = sync.Pool{New: func() any { b := make([]byte, 0, 4096); return &b }}

// Unstructured decodes the object: a new one on every call, sharing nothing
// with the cache.
func (c *Object) Unstructured() (*unstructured.Unstructured, error) {
	var m map[string]any
	if err := utiljson.Unmarshal(c.raw, &m); err != nil {
		return nil, fmt.Errorf("decode cached %s %s/%s: %w", c.Kind, c.Namespace, c.Name, err)
	}
	return &unstructured.Unstructured{Object: m}, nil
}

// Size is the length of the object's JSON (for measurements).
func (c *Object) Size() int { return len(c.raw) }

// DeepCopyObject implements runtime.Object: the metadata is copied, the
// immutable JSON shared.
func (c *Object) DeepCopyObject() runtime.Object {
	if c == nil {
		return nil
	}
	return &Object{TypeMeta: c.TypeMeta, ObjectMeta: *c.ObjectMeta.DeepCopy(), raw: c.raw}
}

// appendJSON writes a value of an unstructured object (what a JSON decoder
// makes of a document: maps, slices, strings, int64, float64, bool, nil) as
// JSON. A float64 is always written with a fraction or an exponent, so that
// it decodes as a float64 again (the Kubernetes decoder makes an int64 of
// every number without one); keys are sorted, so equal objects give equal
// bytes.
func appendJSON(b []byte, v any, depth int) ([]byte, error) {
	if depth > 10000 {
		return nil, fmt.Errorf("nested deeper than 10000 levels")
	}
	switch x := v.(type) {
	case nil:
		return append(b, "null"...), nil
	case string:
		return appendString(b, x), nil
	case bool:
		return strconv.AppendBool(b, x), nil
	case int64:
		return strconv.AppendInt(b, x, 10), nil
	case float64:
		return appendFloat(b, x)
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		b = append(b, '{')
		for i, k := range keys {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendString(b, k)
			b = append(b, ':')
			var err error
			if b, err = appendJSON(b, x[k], depth+1); err != nil {
				return nil, err
			}
		}
		return append(b, '}'), nil
	case []any:
		b = append(b, '[')
		for i, e := range x {
			if i > 0 {
				b = append(b, ',')
			}
			var err error
			if b, err = appendJSON(b, e, depth+1); err != nil {
				return nil, err
			}
		}
		return append(b, ']'), nil
	default:
		// Not what a decoder makes (an object built in code): the standard
		// encoding, whose numbers decode as the Kubernetes decoder decides.
		data, err := json.Marshal(x)
		if err != nil {
			return nil, err
		}
		return append(b, data...), nil
	}
}

func appendFloat(b []byte, f float64) ([]byte, error) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return nil, fmt.Errorf("unsupported number %v", f)
	}
	start := len(b)
	// The shortest representation that reads back as the same float64.
	b = strconv.AppendFloat(b, f, 'g', -1, 64)
	for _, c := range b[start:] {
		if c == '.' || c == 'e' || c == 'E' {
			return b, nil
		}
	}
	return append(b, '.', '0'), nil
}

const hexDigits = "0123456789abcdef"

// appendString writes s as a JSON string. Invalid UTF-8 becomes U+FFFD, as
// encoding/json writes it.
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
