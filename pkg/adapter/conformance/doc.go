// Package conformance is the conformance suite for adapters: one call from a
// _test.go file runs every check of the adapter contract (package adapter)
// against an adapter, compiled into this repository or written out of tree.
//
//	func TestConformance(t *testing.T) {
//		conformance.Run(t, conformance.NewHarness(myadapter.New(), fixtures...))
//	}
//
// A plugin built as a binary runs the same suite through a real process,
// started exactly as the controller starts it:
//
//	conformance.RunPlugin(t, "/path/to/built/plugin", fixtures)
//
// An adapter author supplies a Harness: the adapter and Fixtures, objects of
// its tracked kinds with a few facts each scrape must find (Expect). The
// suite derives everything else from the adapter's declarations: malformed
// variants of every fixture, relabelled copies for multi-version kinds,
// objects of its walk-only kinds and of a kind it does not declare.
//
// # Checks
//
// Each check is a subtest of the test that calls Run, named by one of the
// Check constants; checks over fixtures have one subtest per fixture:
//
//   - Declarations: Name is a DNS label; Kinds is non-empty, each Kind passes
//     adapter.Kind.Validate, no group/kind or group/resource is declared
//     twice, Kinds returns the same declarations on every call and a copy the
//     caller may modify; at least one kind is tracked, unless the harness
//     says the adapter is walk-only (WalkOnly).
//   - Fixtures: every fixture is of a tracked kind in a declared version and
//     has a unique name; every tracked kind has, in every declared version, a
//     fixture that does not set WantErr (or an exception, MissingFixture).
//   - Determinism: a fixture scraped several times, as a deep copy, as a
//     JSON round trip, and rebuilt with the keys of every map inserted in
//     sorted, reversed and shuffled orders (the suite perturbs map order
//     itself, so a fixture needs no map with many keys to show an adapter
//     that depends on it), gives the same findings (compared as JSON) and
//     the same error.
//   - NoMutation: Scrape leaves its input object as it was.
//   - WellFormed: every finding of a fixture is well formed: Scrapers
//     non-empty, each with name, version and method; containers with a
//     name and either an image or ImageFromPods, not both
//     (adapter.Container.Validate); names non-empty; confidences in Confidences; evidence sources in
//     Sources; locators rooted at a LocatorRoots entry ("spec", "metadata")
//     or a root added with LocatorRoot; redactions with a locator and a
//     reason.
//   - NoSecrets: no string in the findings (as JSON) is changed by
//     podtemplate.Redact, and none contains a literal value of an env var or
//     annotation whose name podtemplate.IsSecretName flags. A value known to
//     be harmless (a Git commit hash as a model revision) can be allowed with
//     AllowValue.
//   - MalformedInput: every fixture, mutated under spec and metadata (each
//     field and subtree replaced by a number, a string, a bool, a list, a
//     map, null, deeply nested junk; every list replaced by HugeList
//     entries; spec deleted), is scraped: Scrape must not panic (the suite
//     recovers and reports the path) and must return once its context's
//     deadline (Budget) has passed. Errors are fine. Wall times are logged,
//     not asserted.
//   - CrossVersion: for kinds with more than one declared version, each
//     fixture relabelled into every other declared version (a shape the
//     version does not have) must not panic and must return. Kinds with one
//     version are logged and not checked.
//   - NonTrackedKinds: the core never calls Scrape for a walk-only kind, or
//     for a kind the adapter does not declare; if it is called anyway, it must
//     return an error (and not panic), so that a wiring mistake is loud
//     rather than a document for an intermediate object.
//   - Expectations: each fixture's Expect is met (a subset check); a
//     fixture that sets WantErr (Fixture.WantErr, or Expect.WantErr for
//     fixtures loaded with LoadFixtures) makes Scrape return an error.
//
// Over the plugin transport (RunPlugin, or a harness whose adapter is a
// plugin.Client) a panic of the plugin's adapter, a crash of its process or
// (with RunPlugin, whose calls time out at half the Budget) a call it did
// not answer in time arrive as errors that wrap plugin.ErrAdapterPanicked
// or plugin.ErrFault: the suite fails them as it fails a panic or a hang in
// process.
//
// When an adapter declares no tracked kind (WalkOnly), the checks that need
// a scrape (Fixtures to CrossVersion, and Expectations) are not run: the
// reason is logged with t.Logf. A check can be left out with Skip, which
// must give a reason; the reason is logged, and a Skip that names no check
// of the run is an error, so stale exceptions do not pile up.
//
// # Reporting
//
// Run takes a *testing.T. RunTB takes any TB, for example a Recorder, which
// collects failures and logs in memory: the suite's own tests use it to show
// that a broken adapter fails with a readable report, and tools can use it to
// print a conformance report outside go test.
//
// Every failure says what the adapter did, where (fixture, path, locator),
// and how to fix it.
package conformance
