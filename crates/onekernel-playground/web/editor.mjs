// The editor the playground page uses: CodeMirror 6 with Rust highlighting,
// diagnostics (underlines with their messages) and a highlighted line.
// Bundled by `npm run build` into ../assets/editor.js as the global
// `OKEditor`; the page (assets/playground.js) uses only what is exported here.
import { EditorState, StateEffect, StateField } from "@codemirror/state";
import {
  EditorView, keymap, lineNumbers, highlightActiveLine, highlightActiveLineGutter,
  drawSelection, Decoration,
} from "@codemirror/view";
import { defaultKeymap, history, historyKeymap, indentWithTab } from "@codemirror/commands";
import {
  syntaxHighlighting, defaultHighlightStyle, indentOnInput, bracketMatching, indentUnit,
} from "@codemirror/language";
import { searchKeymap } from "@codemirror/search";
import { setDiagnostics, lintGutter } from "@codemirror/lint";
import { rust } from "@codemirror/lang-rust";

// One highlighted line (the counterpart of the explain row under the mouse).
const setMarked = StateEffect.define();
const markedLine = StateField.define({
  create: () => Decoration.none,
  update(deco, tr) {
    deco = deco.map(tr.changes);
    for (const e of tr.effects) {
      if (e.is(setMarked)) {
        const n = e.value;
        if (n == null || n < 1 || n > tr.state.doc.lines) return Decoration.none;
        const line = tr.state.doc.line(n);
        return Decoration.set([Decoration.line({ class: "ok-marked-line" }).range(line.from)]);
      }
    }
    return deco;
  },
  provide: (f) => EditorView.decorations.from(f),
});

/// Creates an editor in `parent` holding `doc`; `onChange(text)` is called
/// after every edit.
export function create(parent, doc, onChange) {
  const view = new EditorView({
    parent,
    state: EditorState.create({
      doc,
      extensions: [
        lineNumbers(), highlightActiveLineGutter(), history(), drawSelection(),
        indentOnInput(), bracketMatching(), highlightActiveLine(),
        syntaxHighlighting(defaultHighlightStyle, { fallback: true }),
        rust(), lintGutter(), markedLine,
        keymap.of([indentWithTab, ...defaultKeymap, ...historyKeymap, ...searchKeymap]),
        EditorState.tabSize.of(4), indentUnit.of("    "),
        EditorView.updateListener.of((u) => { if (u.docChanged) onChange(u.state.doc.toString()); }),
      ],
    }),
  });
  return {
    view,
    getText: () => view.state.doc.toString(),
    setText(text) {
      view.dispatch({ changes: { from: 0, to: view.state.doc.length, insert: text } });
    },
    /// `line` is 1-based, `column` counts characters from 0 (as the
    /// compiler reports them); returns a document offset.
    offset(line, column) {
      const doc = view.state.doc;
      if (line < 1) return 0;
      if (line > doc.lines) return doc.length;
      const l = doc.line(line);
      let pos = l.from, chars = 0;
      for (const ch of l.text) { if (chars >= column) break; pos += ch.length; chars++; }
      return Math.min(pos, l.to);
    },
    /// Shows `list` ({from, to, severity, message}) as underlines.
    setDiagnostics(list) {
      view.dispatch(setDiagnostics(view.state, list));
    },
    /// Highlights 1-based line `n` (null: none).
    markLine(n) {
      view.dispatch({ effects: setMarked.of(n) });
    },
    /// The 1-based line at a document offset.
    lineAt: (pos) => view.state.doc.lineAt(pos).number,
  };
}
