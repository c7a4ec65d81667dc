// Package document builds the AI Bill of Materials of one workload: a
// CycloneDX 1.6 JSON document.
//
// Build is a pure function of its Input. It reads no clock and no environment,
// sorts everything it emits, and derives the document's serialNumber from the
// document's own content, so that identical inputs always give identical
// bytes and a document only changes when a fact changes.
//
// # Layout
//
//   - metadata.component is the subject workload (type application) with its
//     identity as aibom.workload.* properties.
//   - metadata.tools names the controller that wrote the document.
//   - metadata.properties carry, in order: aibom.confidence (the aggregate),
//     aibom.controller.name and .version, aibom.rollup.owned.<i>, the
//     aibom.scrape.<i>.* of each scraper, the adapter's kind-specific
//     properties, aibom.redaction.<i> and aibom.truncation.applied.
//   - components hold one component per fact: a container per spec container
//     or init container, an application per serving runtime, a
//     machine-learning-model per model and a data component per model
//     storage. Every component carries aibom.confidence,
//     aibom.evidence.source and aibom.evidence.locator.
//
// Output is indented with two spaces, HTML characters are not escaped, and the
// document ends with a newline.
package document
