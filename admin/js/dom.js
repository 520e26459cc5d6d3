// Building the page from data without ever parsing data as HTML: every string becomes a
// text node (or an attribute value), so a memory reading "<img onerror=...>" shows as text.
const SVG_NS = "http://www.w3.org/2000/svg";

function build(element, attrs, children) {
  for (const [name, value] of Object.entries(attrs || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (name.startsWith("on") && typeof value === "function") element.addEventListener(name.slice(2).toLowerCase(), value);
    else if (name === "class") element.setAttribute("class", Array.isArray(value) ? value.filter(Boolean).join(" ") : value);
    else if (name === "dataset") Object.assign(element.dataset, value);
    else if (name === "style") Object.assign(element.style, value);
    else if (["value", "checked", "disabled", "selected", "hidden"].includes(name) && name in element) element[name] = value;
    else element.setAttribute(name, value === true ? "" : String(value));
  }
  append(element, ...children);
  return element;
}

/** Like Element.append, but nested arrays are flattened and null, undefined and false skipped. */
export function append(parent, ...children) {
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    parent.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return parent;
}

/** h("p", {class: "x"}, "text", otherNode): an element; text is always text. */
export function h(tag, attrs, ...children) {
  return build(document.createElement(tag), attrs, children);
}

export function svg(tag, attrs, ...children) {
  return build(document.createElementNS(SVG_NS, tag), attrs, children);
}

export function clear(element) {
  element.replaceChildren();
  return element;
}

/** A small inline icon from a list of SVG path strings (our own constants, never data). */
export function icon(name, size = 20) {
  const paths = ICONS[name] || [];
  return svg(
    "svg",
    { class: "icon", width: size, height: size, viewBox: "0 0 24 24", "aria-hidden": "true", fill: "none",
      stroke: "currentColor", "stroke-width": 1.8, "stroke-linecap": "round", "stroke-linejoin": "round" },
    paths.map((d) => svg("path", { d })),
  );
}

const ICONS = {
  today: ["M4 7h16v13H4z", "M4 11h16", "M8 3v4", "M16 3v4"],
  review: ["M9 11l2 2 4-4", "M5 4h14v16H5z"],
  memories: ["M12 3l8 4.5-8 4.5-8-4.5z", "M4 12l8 4.5 8-4.5", "M4 16.5l8 4.5 8-4.5"],
  conversations: ["M4 5h16v11H9l-5 4z", "M8 9h8", "M8 12h5"],
  more: ["M5 12h.01", "M12 12h.01", "M19 12h.01"],
  settings: ["M12 15a3 3 0 100-6 3 3 0 000 6z", "M19.4 15a1.7 1.7 0 00.3 1.8l.1.1a2 2 0 11-2.8 2.8l-.1-.1a1.7 1.7 0 00-1.8-.3 1.7 1.7 0 00-1 1.5V21a2 2 0 11-4 0v-.1a1.7 1.7 0 00-1.1-1.5 1.7 1.7 0 00-1.8.3l-.1.1a2 2 0 11-2.8-2.8l.1-.1a1.7 1.7 0 00.3-1.8 1.7 1.7 0 00-1.5-1H3a2 2 0 110-4h.1a1.7 1.7 0 001.5-1.1 1.7 1.7 0 00-.3-1.8l-.1-.1a2 2 0 112.8-2.8l.1.1a1.7 1.7 0 001.8.3H9a1.7 1.7 0 001-1.5V3a2 2 0 114 0v.1a1.7 1.7 0 001 1.5 1.7 1.7 0 001.8-.3l.1-.1a2 2 0 112.8 2.8l-.1.1a1.7 1.7 0 00-.3 1.8V9a1.7 1.7 0 001.5 1H21a2 2 0 110 4h-.1a1.7 1.7 0 00-1.5 1z"],
  star: ["M12 3l2.6 5.6 6 .7-4.5 4.1 1.2 6-5.3-3-5.3 3 1.2-6L3.4 9.3l6-.7z"],
  search: ["M11 18a7 7 0 100-14 7 7 0 000 14z", "M20 20l-4-4"],
  plus: ["M12 5v14", "M5 12h14"],
  close: ["M6 6l12 12", "M18 6L6 18"],
  map: ["M5 6a2 2 0 104 0 2 2 0 00-4 0", "M15 8a2 2 0 104 0 2 2 0 00-4 0", "M9 17a2 2 0 104 0 2 2 0 00-4 0", "M8.5 7l6.6.8", "M7.6 8l2.9 7.3", "M16 9.8l-4 5.7"],
  refresh: ["M20 11a8 8 0 10-2.3 5.7", "M20 4v7h-7"],
  check: ["M5 12l5 5 9-10"],
  copy: ["M9 9h11v11H9z", "M5 15V4h11"],
  trash: ["M4 7h16", "M9 7V4h6v3", "M6 7l1 13h10l1-13"],
  edit: ["M4 20h4L19 9l-4-4L4 16z"],
  archive: ["M3 5h18v4H3z", "M5 9v10h14V9", "M10 13h4"],
  merge: ["M6 4v6a6 6 0 006 6h6", "M15 13l3 3-3 3", "M6 4v16"],
  swap: ["M7 7h13", "M16 3l4 4-4 4", "M17 17H4", "M8 13l-4 4 4 4"],
  quote: ["M7 7h4v4H7c0 3 1 4 3 5", "M14 7h4v4h-4c0 3 1 4 3 5"],
  zoomIn: ["M11 18a7 7 0 100-14 7 7 0 000 14z", "M20 20l-4-4", "M8 11h6", "M11 8v6"],
  zoomOut: ["M11 18a7 7 0 100-14 7 7 0 000 14z", "M20 20l-4-4", "M8 11h6"],
  fit: ["M4 9V4h5", "M20 9V4h-5", "M4 15v5h5", "M20 15v5h-5"],
  download: ["M12 4v11", "M7 10l5 5 5-5", "M5 20h14"],
  upload: ["M12 20V9", "M7 14l5-5 5 5", "M5 4h14"],
  moon: ["M20 14.5A8 8 0 119.5 4a6.5 6.5 0 0010.5 10.5z"],
  sun: ["M12 16a4 4 0 100-8 4 4 0 000 8z", "M12 2v2", "M12 20v2", "M4.9 4.9l1.4 1.4", "M17.7 17.7l1.4 1.4", "M2 12h2", "M20 12h2", "M4.9 19.1l1.4-1.4", "M17.7 6.3l1.4-1.4"],
  back: ["M15 18l-6-6 6-6"],
  forward: ["M9 18l6-6-6-6"],
  undo: ["M9 14L4 9l5-5", "M4 9h11a5 5 0 010 10h-4"],
};
