package podtemplate

import (
	"regexp"
	"strings"

	"mvdan.cc/sh/v3/syntax"

	"github.com/aibom-dev/aibom/pkg/adapter"
)

// word is one word of a command line, with the list element it came from.
type word struct {
	text    string
	source  adapter.Source
	locator string // the element, e.g. "spec.template.spec.containers[0].args[3]"
	// unresolved is true when the word still depends on a value the spec
	// does not state (a variable without a literal value, a command
	// substitution).
	unresolved bool
}

// command is one simple command: its words, and the bodies of the
// here-documents fed to it (a Python program given to "python3 - <<EOF").
type command struct {
	words    []word
	heredocs []word
}

// maxScriptBytes bounds the script text parsed as shell; a longer script is
// read as plain words.
const maxScriptBytes = 64 << 10

// maxCommands bounds the commands taken from one script.
const maxCommands = 256

// parseScript parses a shell script (the argument of "sh -c") held by the
// element at loc, and returns its simple commands in order, their words
// expanded: "$VAR", "${VAR}" and "${VAR:-default}" from env and from the
// assignments the script makes before the command, "$@" and "$*" from
// positional (the words after the script, "$0" first). Line continuations,
// quotes and here-documents are handled by the parser. ok is false when the
// script does not parse; the caller then reads it as plain words.
func parseScript(script string, src adapter.Source, loc string, env map[string]string, positional []word) ([]command, bool) {
	if len(script) > maxScriptBytes {
		return nil, false
	}
	file, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(script), "")
	if err != nil {
		return nil, false
	}
	vars := make(map[string]string, len(env))
	for k, v := range env {
		vars[k] = v
	}
	x := expander{vars: vars, positional: positional}
	var out []command
	syntax.Walk(file, func(n syntax.Node) bool {
		if len(out) >= maxCommands {
			return false
		}
		switch n := n.(type) {
		case *syntax.Stmt:
			call, ok := n.Cmd.(*syntax.CallExpr)
			if !ok || len(call.Args) == 0 {
				return true
			}
			var c command
			for _, w := range call.Args {
				if isSpecialAll(w) {
					c.words = append(c.words, positionalAfterZero(positional)...)
					continue
				}
				text, ok := x.word(w)
				c.words = append(c.words, word{text: text, source: src, locator: loc, unresolved: !ok})
			}
			for _, r := range n.Redirs {
				if (r.Op == syntax.Hdoc || r.Op == syntax.DashHdoc) && r.Hdoc != nil {
					text, _ := x.word(r.Hdoc)
					c.heredocs = append(c.heredocs, word{text: text, source: src, locator: loc})
				}
			}
			// Assignments before the command apply to it only; the
			// expansion above already saw the old values, as a shell does.
			out = append(out, c)
			return true
		case *syntax.CallExpr:
			if len(n.Args) == 0 {
				x.assign(n.Assigns)
			}
			return true
		case *syntax.DeclClause:
			x.assign(n.Args)
			return true
		}
		return true
	})
	return out, true
}

// isSpecialAll reports whether a word is exactly "$@" or "$*", quoted or not.
func isSpecialAll(w *syntax.Word) bool {
	if len(w.Parts) != 1 {
		return false
	}
	part := w.Parts[0]
	if dq, ok := part.(*syntax.DblQuoted); ok && len(dq.Parts) == 1 {
		part = dq.Parts[0]
	}
	pe, ok := part.(*syntax.ParamExp)
	return ok && pe.Param != nil && (pe.Param.Value == "@" || pe.Param.Value == "*") && pe.Exp == nil
}

// positionalAfterZero returns "$1".."$n": the positional words without "$0".
func positionalAfterZero(positional []word) []word {
	if len(positional) <= 1 {
		return nil
	}
	return positional[1:]
}

// expander resolves shell words from literal values.
type expander struct {
	vars       map[string]string
	positional []word
}

func (x *expander) assign(list []*syntax.Assign) {
	for _, a := range list {
		if a == nil || a.Name == nil || a.Naked || a.Array != nil || a.Index != nil {
			continue
		}
		if a.Value == nil {
			x.vars[a.Name.Value] = ""
			continue
		}
		v, ok := x.word(a.Value)
		if !ok {
			delete(x.vars, a.Name.Value) // no longer known
			continue
		}
		if a.Append {
			v = x.vars[a.Name.Value] + v
		}
		x.vars[a.Name.Value] = v
	}
}

// word expands a word; ok is false when some part could not be resolved
// (the text then holds a "$" where the unknown part was).
func (x *expander) word(w *syntax.Word) (string, bool) {
	if w == nil {
		return "", true
	}
	var b strings.Builder
	ok := x.parts(w.Parts, &b)
	return b.String(), ok
}

func (x *expander) parts(parts []syntax.WordPart, b *strings.Builder) bool {
	ok := true
	for _, p := range parts {
		switch p := p.(type) {
		case *syntax.Lit:
			b.WriteString(p.Value)
		case *syntax.SglQuoted:
			b.WriteString(p.Value)
		case *syntax.DblQuoted:
			if !x.parts(p.Parts, b) {
				ok = false
			}
		case *syntax.ParamExp:
			v, resolved := x.param(p)
			if !resolved {
				ok = false
				b.WriteString("$")
			}
			b.WriteString(v)
		default: // command substitution, arithmetic, globs, ...
			ok = false
			b.WriteString("$")
		}
	}
	return ok
}

func (x *expander) param(p *syntax.ParamExp) (string, bool) {
	if p.Param == nil || p.Excl || p.Length || p.Index != nil || p.Slice != nil || p.Repl != nil || p.Names != 0 {
		return "", false
	}
	name := p.Param.Value
	v, set := x.vars[name]
	if n := positionalIndex(name); n >= 0 {
		set = n < len(x.positional) && !x.positional[n].unresolved
		if set {
			v = x.positional[n].text
		}
	}
	if p.Exp == nil {
		return v, set
	}
	switch p.Exp.Op {
	case syntax.DefaultUnset, syntax.DefaultUnsetOrNull, syntax.AssignUnset, syntax.AssignUnsetOrNull:
		if set && (v != "" || p.Exp.Op == syntax.DefaultUnset || p.Exp.Op == syntax.AssignUnset) {
			return v, true
		}
		return x.word(p.Exp.Word)
	}
	return "", false
}

// positionalIndex returns n for "$n", -1 for any other name.
func positionalIndex(name string) int {
	if name == "" || len(name) > 3 {
		return -1
	}
	n := 0
	for _, r := range name {
		if r < '0' || r > '9' {
			return -1
		}
		n = n*10 + int(r-'0')
	}
	return n
}

// pythonModelLiteral finds model ids written as string literals in Python
// code (a here-document, "python -c"): an assignment to a model-naming
// variable or keyword, or the first argument of a hub download or
// from_pretrained call. Only "<org>/<name>" ids count.
var pythonModelLiteral = []*regexp.Regexp{
	regexp.MustCompile(`\b(?:model_id|model_name|model_repo|repo_id|model|pretrained_model_name_or_path|base_model)\s*=\s*["']([^"'\s]+)["']`),
	regexp.MustCompile(`\b(?:snapshot_download|hf_hub_download|from_pretrained|pipeline)\(\s*(?:[a-z_]+\s*=\s*)?["']([^"'\s]+)["']`),
}

// modelsInPython returns the model ids the code names, in order, distinct.
func modelsInPython(code string) []string {
	if len(code) > maxScriptBytes {
		code = code[:maxScriptBytes]
	}
	var out []string
	seen := map[string]bool{}
	for _, re := range pythonModelLiteral {
		for _, m := range re.FindAllStringSubmatch(code, 16) {
			v := m[1]
			if hubID.MatchString(v) && !seen[v] && !IsPlaceholder(v) {
				seen[v] = true
				out = append(out, v)
			}
		}
	}
	return out
}
