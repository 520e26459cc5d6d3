// A small force layout: nodes repel, edges pull, each type gathers around its own
// point on a ring, and everything drifts to the middle. Deterministic for the same data.

function seeded(text) {
  let hash = 2166136261;
  for (let i = 0; i < text.length; i++) hash = Math.imul(hash ^ text.charCodeAt(i), 16777619);
  return ((hash >>> 0) % 10000) / 10000;
}

/** nodes: [{id, type, radius}], edges: [{source, target, weight}] → sets node.x / node.y. */
export function layout(nodes, edges, { iterations = 260 } = {}) {
  const types = [...new Set(nodes.map((n) => n.type))].sort();
  const spread = 60 + Math.sqrt(nodes.length) * 28;
  const anchors = new Map(types.map((t, i) => {
    const angle = (i / Math.max(types.length, 1)) * Math.PI * 2 - Math.PI / 2;
    return [t, types.length > 1 ? { x: Math.cos(angle) * spread, y: Math.sin(angle) * spread } : { x: 0, y: 0 }];
  }));
  for (const node of nodes) {
    const anchor = anchors.get(node.type);
    const angle = seeded(node.id) * Math.PI * 2;
    const distance = 20 + seeded(`${node.id}:r`) * spread * 0.5;
    node.x = anchor.x + Math.cos(angle) * distance;
    node.y = anchor.y + Math.sin(angle) * distance;
    node.vx = 0;
    node.vy = 0;
  }
  const byId = new Map(nodes.map((n) => [n.id, n]));
  const links = edges.map((e) => ({ a: byId.get(e.source), b: byId.get(e.target), weight: e.weight || 1 })).filter((l) => l.a && l.b);
  const repulsion = 900;
  for (let step = 0; step < iterations; step++) {
    const cooling = 1 - step / iterations;
    for (let i = 0; i < nodes.length; i++) {
      const a = nodes[i];
      for (let j = i + 1; j < nodes.length; j++) {
        const b = nodes[j];
        let dx = a.x - b.x;
        let dy = a.y - b.y;
        let d2 = dx * dx + dy * dy;
        if (d2 < 0.01) { dx = 0.1; dy = 0.1; d2 = 0.02; }
        if (d2 > 250000) continue;
        const minimum = a.radius + b.radius + 6;
        const force = repulsion / d2 + (d2 < minimum * minimum ? 2 : 0);
        const d = Math.sqrt(d2);
        a.vx += (dx / d) * force; a.vy += (dy / d) * force;
        b.vx -= (dx / d) * force; b.vy -= (dy / d) * force;
      }
    }
    for (const { a, b, weight } of links) {
      const dx = b.x - a.x;
      const dy = b.y - a.y;
      const d = Math.sqrt(dx * dx + dy * dy) || 1;
      const pull = (d - 70) * 0.02 * weight;
      a.vx += (dx / d) * pull; a.vy += (dy / d) * pull;
      b.vx -= (dx / d) * pull; b.vy -= (dy / d) * pull;
    }
    for (const node of nodes) {
      const anchor = anchors.get(node.type);
      node.vx += (anchor.x - node.x) * 0.012 - node.x * 0.002;
      node.vy += (anchor.y - node.y) * 0.012 - node.y * 0.002;
      const speed = Math.hypot(node.vx, node.vy);
      const limit = 12 * cooling + 0.5;
      if (speed > limit) { node.vx *= limit / speed; node.vy *= limit / speed; }
      node.x += node.vx;
      node.y += node.vy;
      node.vx *= 0.55;
      node.vy *= 0.55;
    }
  }
  return nodes;
}

export function bounds(nodes) {
  if (!nodes.length) return { x: -100, y: -100, width: 200, height: 200 };
  const xs = nodes.map((n) => n.x);
  const ys = nodes.map((n) => n.y);
  const pad = 40;
  const x = Math.min(...xs) - pad;
  const y = Math.min(...ys) - pad;
  return { x, y, width: Math.max(...xs) - x + pad, height: Math.max(...ys) - y + pad };
}
