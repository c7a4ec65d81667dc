package reconcile

import (
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"sync"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/aibom-dev/aibom/api/v1alpha1"
	"github.com/aibom-dev/aibom/pkg/core/graph"
)

// The controller knows what it wrote. Its AIBOM cache may lag behind its own
// writes (a create not seen yet, a status patch not seen yet); decisions that
// would otherwise trust that cache consult this record instead:
//
//   - a delete whose cache says "no AIBOM" still deletes an AIBOM this
//     process created and has not seen deleted;
//   - a reconcile whose cache still shows the AIBOM as it was before our last
//     status patch does not write the same status again;
//   - a stored status that is neither ours nor lagging behind ours (someone
//     else wrote it: a forged document, a changed input hash) is compared
//     with what the controller would write, and repaired.

// writeRecord is what the controller last wrote to one AIBOM.
type writeRecord struct {
	// uid is the AIBOM's UID (from our create, or the cache).
	uid types.UID
	// inputHash and docSHA are the status.inputHash and
	// status.documentSHA256 of our last status write or verification.
	inputHash, docSHA string
	// statusSum is the statusSum of that status (invariants.go): a summary,
	// count or reference changed behind our back no longer matches.
	statusSum string
	// behind lists resourceVersions the AIBOM had before our last write
	// landed: a cache that shows one of them has not seen the write yet.
	behind []string
}

// writeLog is the per-process record of AIBOM writes, by AIBOM key.
type writeLog struct {
	m sync.Map // client.ObjectKey -> writeRecord
	// pending holds the writes sent and not answered yet (client.ObjectKey
	// -> pendingWrite): the watch may deliver a write's echo before its
	// response returns, and the echo must still be recognised as ours.
	pending sync.Map
}

// pendingWrite is a write in flight: a create (no UID known yet), or a
// status patch with the record it leaves once answered.
type pendingWrite struct {
	create bool
	status *writeRecord
}

// sending records a write about to be sent; sent forgets it, once
// its outcome is in the record (or it failed).
func (l *writeLog) sending(key client.ObjectKey, p pendingWrite) { l.pending.Store(key, p) }
func (l *writeLog) sent(key client.ObjectKey)                    { l.pending.Delete(key) }

// inFlight reports whether an AIBOM delivered by an event is the echo of a
// write of ours still in flight: the create (no status yet) or the status
// patch (the status it writes).
func (l *writeLog) inFlight(a *v1alpha1.AIBOM) bool {
	if l == nil {
		return false
	}
	v, ok := l.pending.Load(client.ObjectKeyFromObject(a))
	if !ok {
		return false
	}
	p := v.(pendingWrite)
	if p.status != nil && (p.status.uid == "" || p.status.uid == a.UID) && p.status.matches(a) {
		return true
	}
	return p.create && a.Status.InputHash == "" && a.Status.DocumentSHA256 == "" && len(a.Status.Conditions) == 0
}

func (l *writeLog) load(key client.ObjectKey) (writeRecord, bool) {
	if l == nil {
		return writeRecord{}, false
	}
	v, ok := l.m.Load(key)
	if !ok {
		return writeRecord{}, false
	}
	return v.(writeRecord), true
}

func (l *writeLog) store(key client.ObjectKey, rec writeRecord) { l.m.Store(key, rec) }

// Delete forgets an AIBOM (deleted by us, or found gone).
func (l *writeLog) Delete(key client.ObjectKey) { l.m.Delete(key) }

// forgetDeleted drops the record of an AIBOM seen deleted, unless the record
// is of a newer AIBOM under the same name.
func (l *writeLog) forgetDeleted(a *v1alpha1.AIBOM) {
	if l == nil {
		return
	}
	key := client.ObjectKeyFromObject(a)
	if rec, ok := l.load(key); ok && rec.uid == a.UID {
		l.m.Delete(key)
	}
}

// lagging reports whether a cached AIBOM predates our last write to it.
func (rec writeRecord) lagging(cached *v1alpha1.AIBOM) bool {
	return slices.Contains(rec.behind, cached.ResourceVersion)
}

// matches reports whether a cached AIBOM's status is the one we last wrote
// (or verified): same input hash, and a stored document with our hash.
func (rec writeRecord) matches(cached *v1alpha1.AIBOM) bool {
	return cached.Status.InputHash == rec.inputHash && cached.Status.DocumentSHA256 == rec.docSHA &&
		(rec.statusSum == "" || statusSum(cached.Status) == rec.statusSum)
}

// ownStatus reports whether an AIBOM as delivered by an event carries the
// status we last wrote (our own write coming back, or an older state of
// it): such an event needs no reconcile.
func (l *writeLog) ownStatus(a *v1alpha1.AIBOM) bool {
	rec, ok := l.load(client.ObjectKeyFromObject(a))
	return (ok && (rec.matches(a) || rec.lagging(a))) || l.inFlight(a)
}

// ownCreate reports whether an AIBOM delivered by a create event is the one
// this process created, carrying no status yet or the status we last wrote
// (the echo of our own create, or a relist): its subject needs no reconcile.
func (l *writeLog) ownCreate(a *v1alpha1.AIBOM) bool {
	if l.inFlight(a) {
		return true
	}
	rec, ok := l.load(client.ObjectKeyFromObject(a))
	if !ok || rec.uid == "" || rec.uid != a.UID {
		return false
	}
	empty := a.Status.InputHash == "" && a.Status.DocumentSHA256 == "" && len(a.Status.Conditions) == 0
	return empty || rec.matches(a) || rec.lagging(a)
}

// forgedPrefix marks, in the cached copy of an AIBOM, a documentSHA256 that
// does not match the stored document (see observeDocument).
const forgedPrefix = "stored-document-hashes-to:"

// observeDocument replaces, in an AIBOM about to enter the cache without its
// document, status.documentSHA256 by what the stored document really hashes
// to when the two disagree. The reconciler compares that value with the hash
// of the document it would write: a document replaced behind the
// controller's back, with or without its hash, is seen and rewritten.
//
// A document held by a sink (status.documentRef, no inline body) is checked
// against the reference's hash only: the body is elsewhere.
//
// An informer may transform the same object twice (its document already
// dropped the second time): the observation is remembered per AIBOM UID and
// resourceVersion, values the API server sets and nobody can forge.
func observeDocument(a *v1alpha1.AIBOM) {
	if prev, ok := observations.Load(a.UID); ok && a.UID != "" && prev.(observation).resourceVersion == a.ResourceVersion {
		a.Status.DocumentSHA256 = prev.(observation).sha
		return
	}
	// A reference is held only if this process wrote it or saw the sink
	// deliver there (trustedRef): a forged one reads as an empty document.
	held := a.Status.Document == "" && a.Status.DocumentRef != nil && a.Status.DocumentRef.SHA256 == a.Status.DocumentSHA256 &&
		trustedRef(a.UID, a.Status.DocumentRef)
	if !held && (a.Status.Document != "" || a.Status.DocumentSHA256 != "") {
		sum := sha256.Sum256([]byte(a.Status.Document))
		if got := hex.EncodeToString(sum[:]); got != a.Status.DocumentSHA256 {
			a.Status.DocumentSHA256 = forgedPrefix + got
		}
	}
	if a.UID != "" {
		observations.Store(a.UID, observation{resourceVersion: a.ResourceVersion, sha: a.Status.DocumentSHA256})
	}
}

// observations: AIBOM UID -> the last version observeDocument saw.
var observations sync.Map

type observation struct{ resourceVersion, sha string }

// forgetObservation drops a deleted AIBOM's observation.
func forgetObservation(uid types.UID) { observations.Delete(uid); forgetTrustedRefs(uid) }

// TransformAIBOM keeps of an AIBOM what the controller reads from its cache:
// everything but status.document (tens of KB per root, most of what an
// AIBOM weighs) and managed fields. The reconciler compares
// status.inputHash, reads the conditions, documentSHA256 and documentSize,
// and builds its status merge patch on the cached AIBOM: a patch whose new
// status carries a document always writes it (the base has none), and a
// reconcile that keeps the last document (scrape or build failed) leaves
// status.document out of the patch, so the API server keeps it. Anything
// that is not an AIBOM goes through TransformMetadata. A documentSHA256 that
// does not match the stored document is replaced by a marker carrying the
// document's real hash (observeDocument), so that a forged document is seen.
func TransformAIBOM(in any) (any, error) {
	a, ok := in.(*v1alpha1.AIBOM)
	if !ok || a == nil {
		return graph.TransformMetadata(in)
	}
	observeDocument(a)
	a.Status.Document = ""
	a.ManagedFields = nil
	return a, nil
}
