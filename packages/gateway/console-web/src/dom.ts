/**
 * The page's only way to build DOM: elements with a class and plain attributes, and children that
 * are nodes or strings, and strings only ever become text nodes. There is no innerHTML, no event
 * attribute and no style attribute anywhere in the page (its CSP would refuse them anyway).
 */
export type Child = Node | string | number | false | null | undefined;

const FORBIDDEN_ATTRIBUTE = /^(on|style$|srcdoc$|formaction$)/i;

export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attributes: Record<string, string> = {},
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const element = document.createElement(tag);
  for (const [key, value] of Object.entries(attributes)) {
    if (FORBIDDEN_ATTRIBUTE.test(key)) throw new Error(`attribute ${key} is not used on this page`);
    if (key === 'class') element.className = value;
    else element.setAttribute(key, value);
  }
  append(element, ...children);
  return element;
}

export function append(parent: Node, ...children: Child[]): void {
  for (const child of children) {
    if (child === false || child === null || child === undefined) continue;
    parent.appendChild(typeof child === 'object' ? child : document.createTextNode(String(child)));
  }
}

export function replace(parent: Element, ...children: Child[]): void {
  parent.replaceChildren();
  append(parent, ...children);
}

const SVG = 'http://www.w3.org/2000/svg';

export function svg(
  tag: string,
  attributes: Record<string, string | number> = {},
  ...children: Child[]
): SVGElement {
  const element = document.createElementNS(SVG, tag);
  for (const [key, value] of Object.entries(attributes)) {
    if (FORBIDDEN_ATTRIBUTE.test(key)) throw new Error(`attribute ${key} is not used on this page`);
    element.setAttribute(key, String(value));
  }
  append(element, ...children);
  return element;
}
