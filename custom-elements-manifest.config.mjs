// Config of @custom-elements-manifest/analyzer (`cem analyze`), run by scripts/build-package.mjs:
// writes custom-elements.json for the <mha-*> elements of web/lib/components/.
// Two small plugins keep the manifest true to the Lit classes:
//  - reactive properties declared with `state: true` or `attribute: false` in `static properties`
//    are not attributes (the analyzer's Lit support reads getters, not this class-field form);
//    members named with a leading underscore are private;
//  - a JSDoc `@cssprop --a, --b - text` line documents each of the comma-separated properties.
function litStaticProperties() {
  const byClass = new Map();   // class name -> {noAttr: Set, state: Set}
  return {
    name: 'mha-lit-static-properties',
    analyzePhase({ ts, node }) {
      if (!ts.isClassDeclaration(node) || !node.name) return;
      for (const m of node.members) {
        const isStatic = m.modifiers?.some((x) => x.kind === ts.SyntaxKind.StaticKeyword);
        if (!isStatic || !ts.isPropertyDeclaration(m) || m.name.getText() !== 'properties') continue;
        if (!m.initializer || !ts.isObjectLiteralExpression(m.initializer)) continue;
        const info = { noAttr: new Set(), state: new Set() };
        for (const p of m.initializer.properties) {
          if (!ts.isPropertyAssignment(p) || !ts.isObjectLiteralExpression(p.initializer)) continue;
          const name = p.name.getText().replace(/^['"]|['"]$/g, '');
          for (const opt of p.initializer.properties) {
            if (!ts.isPropertyAssignment(opt)) continue;
            const k = opt.name.getText(), v = opt.initializer.getText();
            if (k === 'state' && v === 'true') { info.state.add(name); info.noAttr.add(name); }
            if (k === 'attribute' && v === 'false') info.noAttr.add(name);
          }
        }
        byClass.set(node.name.getText(), info);
      }
    },
    packageLinkPhase({ customElementsManifest }) {
      for (const mod of customElementsManifest.modules) {
        for (const d of mod.declarations ?? []) {
          const info = byClass.get(d.name);
          if (info && d.attributes) {
            d.attributes = d.attributes.filter((a) => !info.noAttr.has(a.fieldName ?? a.name));
          }
          for (const m of d.members ?? []) {
            if (m.name.startsWith('_')) m.privacy = 'private';   // the components' convention
            if (info && m.kind === 'field' && info.noAttr.has(m.name)) delete m.attribute;
          }
          if (d.cssProperties) {
            // "@cssprop --a, --b, --c - Theme." arrives as name "--a" and description "--b, --c - Theme."
            d.cssProperties = d.cssProperties.flatMap((p) => {
              const m = /^((?:--[\w-]+\s*,\s*)*--[\w-]+)\s+-\s+(.*)$/s.exec(p.description ?? '');
              if (!m || !/^--[\w-]+,?$/.test(p.name)) return [{ ...p, name: p.name.replace(/,$/, '') }];
              const names = [p.name.replace(/,$/, ''), ...m[1].split(',').map((x) => x.trim())];
              return names.map((name) => ({ ...p, name, description: m[2] }));
            });
          }
        }
      }
    },
  };
}

export default {
  globs: ['web/lib/components/**/*.js'],
  outdir: '.',
  litelement: true,
  plugins: [litStaticProperties()],
};
