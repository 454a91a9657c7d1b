// The page index view: boxes are drawn when their page comes near the screen, so a 300-page filing opens
// at once. Document text is only ever set as text (textContent, text nodes), never parsed as markup.
(() => {
  "use strict";
  const data = JSON.parse(document.getElementById("pageindex-data").textContent);
  const sections = Array.from(document.querySelectorAll("section.page"));
  const built = new Set();
  const details = document.getElementById("details");
  let selected = null;

  function place(element, box) {
    element.style.left = box[0] + "%";
    element.style.top = box[1] + "%";
    element.style.width = box[2] + "%";
    element.style.height = box[3] + "%";
  }

  function label(node) {
    return node.t.replace("_", " ") + (node.l ? " " + node.l : "");
  }

  function appendMarked(parent, text, marks) {
    let done = 0;
    for (const [start, end] of marks || []) {
      parent.appendChild(document.createTextNode(text.slice(done, start)));
      const mark = document.createElement("mark");
      mark.textContent = text.slice(start, end);
      parent.appendChild(mark);
      done = end;
    }
    parent.appendChild(document.createTextNode(text.slice(done)));
  }

  function unplacedBlock(node, j) {
    const block = document.createElement("div");
    block.className = "block t-" + node.t;
    block.dataset.j = j;
    const tag = document.createElement("span");
    tag.className = "tag";
    tag.textContent = label(node);
    const text = document.createElement("div");
    text.className = "text";
    appendMarked(text, node.x, node.m);
    block.append(tag, text);
    return block;
  }

  function build(section) {
    const k = Number(section.dataset.k);
    if (built.has(k)) return;
    built.add(k);
    const sheet = section.querySelector(".sheet");
    if (!sheet.classList.contains("picture")) return;
    const page = data.pages[k];
    const boxes = document.createDocumentFragment();
    const unplaced = [];
    page.nodes.forEach((node, j) => {
      if (!node.b) {
        unplaced.push([node, j]);
        return;
      }
      const box = document.createElement("div");
      box.className = "box t-" + node.t;
      box.dataset.j = j;
      box.title = label(node) + (node.x ? ": " + node.x.slice(0, 300) : "");
      place(box, node.b);
      boxes.appendChild(box);
    });
    for (const hitBox of page.h || []) {
      const hit = document.createElement("div");
      hit.className = "hit";
      place(hit, hitBox);
      boxes.appendChild(hit);
    }
    sheet.appendChild(boxes);
    if (unplaced.length) {
      const more = document.createElement("details");
      more.className = "unplaced";
      const summary = document.createElement("summary");
      summary.textContent = unplaced.length + " node(s) without a position on the page";
      more.appendChild(summary);
      more.addEventListener("toggle", () => {
        if (more.open && more.childElementCount === 1) {
          for (const [node, j] of unplaced) more.appendChild(unplacedBlock(node, j));
        }
      });
      section.appendChild(more);
    }
  }

  if ("IntersectionObserver" in window) {
    const observer = new IntersectionObserver((entries) => {
      for (const entry of entries) {
        if (entry.isIntersecting) {
          build(entry.target);
          observer.unobserve(entry.target);
        }
      }
    }, { rootMargin: "1500px 0px" });
    sections.forEach((section) => observer.observe(section));
  } else {
    sections.forEach(build);
  }

  function show(element) {
    const section = element.closest("section.page");
    const node = data.pages[Number(section.dataset.k)].nodes[Number(element.dataset.j)];
    if (selected) selected.classList.remove("selected");
    selected = element;
    element.classList.add("selected");
    details.querySelector(".kind").textContent =
      label(node) + " · page " + section.dataset.page + " · " + node.id;
    const text = details.querySelector(".text");
    text.replaceChildren();
    appendMarked(text, node.x || "(no text)", node.m);
    details.hidden = false;
  }

  document.getElementById("pages").addEventListener("click", (event) => {
    const element = event.target.closest("[data-j]");
    if (element) show(element);
  });
  details.querySelector(".close").addEventListener("click", () => {
    details.hidden = true;
    if (selected) selected.classList.remove("selected");
    selected = null;
  });

  // Go to a page (and a box on it); the address then names the page, unless `remember` is false.
  function go(pageNumber, box, remember = true) {
    const section = document.getElementById("page-" + pageNumber);
    if (!section) return false;
    build(section);
    const sheet = section.querySelector(".sheet");
    if (box && sheet.classList.contains("picture")) {
      let target = document.getElementById("toc-target");
      if (!target) {
        target = document.createElement("div");
        target.id = "toc-target";
        target.className = "target";
      }
      sheet.appendChild(target);
      place(target, box);
      target.classList.remove("flash");
      void target.offsetWidth; // restart the animation
      target.classList.add("flash");
      target.scrollIntoView({ block: "center" });
    } else {
      section.scrollIntoView({ block: "start" }); // below the top edge by the section's scroll-margin
    }
    if (remember) history.replaceState(null, "", "#page-" + pageNumber);
    return true;
  }

  // The query's first word on a page: the topmost yellow box on a picture, the first mark in text.
  function firstHit(section) {
    let first = null;
    for (const hit of section.querySelectorAll(".sheet .hit, .sheet.text mark")) {
      if (!first || hit.getBoundingClientRect().top < first.getBoundingClientRect().top) first = hit;
    }
    return first;
  }

  // A match: its page from the top, label and all; and if its first marked word is then below the
  // screen, that word in the middle of it (the page's label stays at the top, where it sticks).
  function goMatch(pageNumber, remember = true) {
    if (!go(pageNumber, null, remember)) return false;
    const hit = firstHit(document.getElementById("page-" + pageNumber));
    if (hit && hit.getBoundingClientRect().bottom > window.innerHeight) {
      hit.scrollIntoView({ block: "center" });
    }
    return true;
  }

  document.getElementById("side").addEventListener("click", (event) => {
    const link = event.target.closest("a[data-goto]");
    if (!link) return;
    event.preventDefault();
    const box = link.dataset.box ? link.dataset.box.split(",").map(Number) : null;
    document.querySelectorAll(".toc-link.active").forEach((active) => active.classList.remove("active"));
    if (link.classList.contains("toc-link")) link.classList.add("active");
    if (link.closest("#matches")) goMatch(Number(link.dataset.goto));
    else go(Number(link.dataset.goto), box);
  });

  document.querySelectorAll("#legend input[data-type]").forEach((input) => {
    input.addEventListener("change", () => {
      document.body.classList.toggle("hide-" + input.dataset.type, !input.checked);
    });
  });

  // A page named in the address is shown; else a view made with a query opens at its best match that
  // is in the index (the first link of the list, which is in rank order). The address is left as it is:
  // a page named in it is scrolled to again by the browser once the pictures are in, undoing the move
  // to the match's word.
  if (location.hash.startsWith("#page-")) {
    go(Number(location.hash.slice(6)), null);
  } else {
    const best = document.querySelector("#matches li.match a[data-goto]");
    if (best) goMatch(Number(best.dataset.goto), false);
  }

  // For scripts and tests: draw a page's boxes now, or go to a page (and a box on it), or to a match.
  window.pageIndexView = { build: (n) => build(document.getElementById("page-" + n)), go, goMatch, data };
})();
