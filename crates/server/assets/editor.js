// The moderator's map editor: a scenario as the JSON of the TOML format's structure, painted on
// a hex map, checked by the server as it changes (its problems listed, its map previewed by the
// game's own renderer), saved as a scenario, downloaded as TOML, and made into a campaign.
'use strict';

(() => {
  const { el, api } = Adj;
  const $ = (id) => document.getElementById(id);
  const SVG = 'http://www.w3.org/2000/svg';
  const R = 20;
  const H = Math.sqrt(3) * R;
  let token = null;
  /** The scenario being edited, in the JSON form the server reads. */
  let model = null;
  let cursor = '0101';
  let river = 0;
  let rail = 0;
  /** The last answer of the check, and which change it answered. */
  let checked = null;
  let changes = 0;
  /** The uploaded scenario the current state was saved as, if it has not changed since. */
  let saved = null;

  Adj.signIn('adjutant.token.console', (t) => {
    token = t;
    if (token) listScenarios();
  });

  // ------------------------------------------------------------------ hexes

  const hexName = (c, r) => `${String(c).padStart(2, '0')}${String(r).padStart(2, '0')}`;
  const colOf = (hex) => Number(hex.slice(0, 2));
  const rowOf = (hex) => Number(hex.slice(2, 4));
  const onMap = (c, r) => c >= 1 && r >= 1 && c <= model.map.columns && r <= model.map.rows;
  /** A hexside as the server writes it: its two hexes in order. */
  const sideName = (a, b) => (a < b ? `${a}/${b}` : `${b}/${a}`);
  const canonical = (side) => {
    const [a, b] = String(side).split('/').map((h) => h.trim());
    return b === undefined ? String(side) : sideName(a, b);
  };

  /** The centre of a hex: flat-topped, in columns, every even column half a hex lower. */
  function centre(hex) {
    const c = colOf(hex);
    const r = rowOf(hex);
    return [R + (c - 1) * 1.5 * R, H / 2 + (r - 1) * H + (c % 2 === 0 ? H / 2 : 0)];
  }

  /** The neighbour in direction d: 0 north, 1 north-east, 2 south-east, 3 south, 4 south-west, 5 north-west. */
  function neighbour(hex, d) {
    const c = colOf(hex);
    const r = rowOf(hex);
    const even = c % 2 === 0;
    const steps = [[0, -1], [1, even ? 0 : -1], [1, even ? 1 : 0], [0, 1], [-1, even ? 1 : 0], [-1, even ? 0 : -1]];
    const [dc, dr] = steps[d];
    return onMap(c + dc, r + dr) ? hexName(c + dc, r + dr) : null;
  }

  function points(x, y, radius) {
    return Array.from({ length: 6 }, (_, i) => {
      const a = (Math.PI / 3) * i;
      return `${(x + radius * Math.cos(a)).toFixed(1)},${(y + radius * Math.sin(a)).toFixed(1)}`;
    }).join(' ');
  }

  /** The two ends of the edge two adjacent hexes share. */
  function sideEnds(side) {
    const [a, b] = side.split('/');
    const [ax, ay] = centre(a);
    const [bx, by] = centre(b);
    const [mx, my] = [(ax + bx) / 2, (ay + by) / 2];
    const len = Math.hypot(bx - ax, by - ay) || 1;
    const [px, py] = [(-(by - ay) / len) * R / 2, ((bx - ax) / len) * R / 2];
    return { mx, my, dx: (bx - ax) / len, dy: (by - ay) / len, x1: mx - px, y1: my - py, x2: mx + px, y2: my + py };
  }

  function node(tag, attrs, text) {
    const n = document.createElementNS(SVG, tag);
    for (const [k, v] of Object.entries(attrs)) n.setAttribute(k, String(v));
    if (text !== undefined) n.textContent = text;
    return n;
  }

  // ------------------------------------------------------------------ the scenario

  const cityAt = (hex) => model.map.cities.find((c) => c.hex === hex);
  const riverOf = (side) => model.map.rivers.findIndex((rv) => rv.hexsides.some((s) => canonical(s) === side));
  const bridgeAt = (side) => model.map.bridges.findIndex((b) => canonical(b.hexside) === side);

  /** The server's own reading of a scenario's text, as JSON. */
  async function read(id) {
    const found = await api('GET', `/v1/scenarios/${encodeURIComponent(id)}`, token);
    if (!found.ok) return { error: found.detail };
    const answer = await api('POST', '/v1/scenarios/check', token, { text: found.data.text });
    if (!answer.ok || !answer.data.scenario) return { error: answer.ok ? 'its text does not read as TOML' : answer.detail };
    return { scenario: answer.data.scenario, view: found.data };
  }

  /** Fills in what the format may leave out, so the editor can rely on it. */
  function normalise(s) {
    s.map = s.map || {};
    for (const key of ['woods', 'cities', 'rivers', 'bridges', 'rail']) s.map[key] = s.map[key] || [];
    s.deployment = s.deployment || {};
    s.deployment.union = s.deployment.union || [];
    s.deployment.confederate = s.deployment.confederate || [];
    s.units = s.units || {};
    s.units.union = s.units.union || [];
    s.units.confederate = s.units.confederate || [];
    s.victory = s.victory || [];
    s.reinforcement = s.reinforcement || {};
    s.reinforcement.confederate_cities = s.reinforcement.confederate_cities || [];
    return s;
  }

  async function listScenarios() {
    const options = [];
    const server = await api('GET', '/v1/scenarios?limit=100', token);
    if (!server.ok) return;
    for (const s of server.data.server) options.push(el('option', { value: s.id }, `${s.title} (shipped: ${s.name})`));
    let page = server.data;
    for (;;) {
      for (const s of page.uploaded) options.push(el('option', { value: s.id }, `${s.name} — ${s.title} (yours)`));
      if (!page.next_after) break;
      const next = await api('GET', `/v1/scenarios?limit=100&after=${encodeURIComponent(page.next_after)}`, token);
      if (!next.ok) break;
      page = next.data;
    }
    $('open-pick').replaceChildren(...options);
  }

  function start(scenario, saveName) {
    model = normalise(scenario);
    cursor = '0101';
    river = 0;
    rail = 0;
    saved = null;
    $('save-name').value = saveName || '';
    $('saved').replaceChildren();
    $('editor-created').replaceChildren();
    $('workbench').hidden = false;
    // The map takes the room the start forms had; they stay a click away.
    $('start').open = false;
    drawDetails();
    drawAll();
    changed();
  }

  // ------------------------------------------------------------------ drawing

  function drawAll() {
    drawMap();
    drawCities();
    drawVictory();
    drawUnits();
    drawLines();
  }

  function drawMap() {
    const { columns, rows } = model.map;
    const width = R + (columns - 1) * 1.5 * R + R + 2;
    const height = rows * H + H / 2 + 2;
    const svg = node('svg', { viewBox: `-1 -1 ${width.toFixed(1)} ${height.toFixed(1)}`, tabindex: 0, role: 'application',
      'aria-label': `Map of ${columns} columns by ${rows} rows`, 'aria-describedby': 'keys-hint', id: 'edit-svg' });
    svg.classList.add(`tool-${tool()}`);
    // A small map is drawn at a size its hexes read at, not stretched to the page.
    svg.style.maxWidth = `${Math.max(20, columns * 3.2)}rem`;
    // On a phone a large map scrolls rather than shrinking its hexes past tapping.
    svg.style.minWidth = `${Math.max(20, columns * 1.8)}rem`;
    const hexes = node('g', { class: 'hexes' });
    const labels = node('g', { class: 'labels' });
    const woods = new Set(model.map.woods);
    for (let c = 1; c <= columns; c += 1) {
      for (let r = 1; r <= rows; r += 1) {
        const hex = hexName(c, r);
        const [x, y] = centre(hex);
        const city = cityAt(hex);
        const kind = city ? 'city' : woods.has(hex) ? 'woods' : 'clear';
        hexes.append(node('polygon', { points: points(x, y, R - 0.5), 'data-hex': hex, class: `hex ${kind}` }));
        labels.append(node('text', { x: x.toFixed(1), y: (y - R * 0.55).toFixed(1), class: 'hex-label' }, hex));
        if (city) {
          labels.append(node('text', { x: x.toFixed(1), y: (y + R * 0.3).toFixed(1), class: `city-letter ${city.control || 'nobody'}` }, city.letter));
        }
      }
    }
    svg.append(hexes);
    // Rail: consecutive hexes of a line joined centre to centre.
    const rails = node('g', { class: 'rails' });
    model.map.rail.forEach((line, i) => {
      const pts = line.hexes.filter((h) => onMap(colOf(h), rowOf(h))).map((h) => centre(h).map((v) => v.toFixed(1)).join(','));
      if (pts.length > 1) rails.append(node('polyline', { points: pts.join(' '), class: `rail-line${i === rail ? ' current' : ''}` }));
      for (const h of line.hexes.filter((x) => onMap(colOf(x), rowOf(x)))) {
        const [x, y] = centre(h);
        rails.append(node('circle', { cx: x.toFixed(1), cy: y.toFixed(1), r: 2.5, class: 'rail-stop' }));
      }
    });
    svg.append(rails);
    const rivers = node('g', { class: 'rivers' });
    model.map.rivers.forEach((rv) => {
      for (const s of rv.hexsides) {
        const side = canonical(s);
        const [a, b] = side.split('/');
        if (!a || !b || !onMap(colOf(a), rowOf(a)) || !onMap(colOf(b), rowOf(b))) continue;
        const e = sideEnds(side);
        rivers.append(node('line', { x1: e.x1.toFixed(1), y1: e.y1.toFixed(1), x2: e.x2.toFixed(1), y2: e.y2.toFixed(1), class: 'river' }));
      }
    });
    for (const b of model.map.bridges) {
      const side = canonical(b.hexside);
      const [h1, h2] = side.split('/');
      if (!h1 || !h2 || !onMap(colOf(h1), rowOf(h1)) || !onMap(colOf(h2), rowOf(h2))) continue;
      const e = sideEnds(side);
      const k = R * 0.35;
      rivers.append(node('line', { x1: (e.mx - e.dx * k).toFixed(1), y1: (e.my - e.dy * k).toFixed(1),
        x2: (e.mx + e.dx * k).toFixed(1), y2: (e.my + e.dy * k).toFixed(1), class: `bridge ${b.kind}` }));
    }
    svg.append(rivers);
    svg.append(labels);
    // Deployment: a ring in the side's colour around each city a side deploys near.
    const deploy = node('g', { class: 'deploy' });
    for (const [side, grow] of [['union', 0], ['confederate', 3]]) {
      for (const letter of model.deployment[side]) {
        const city = model.map.cities.find((c) => c.letter === letter);
        if (!city || !onMap(colOf(city.hex), rowOf(city.hex))) continue;
        const [x, y] = centre(city.hex);
        deploy.append(node('circle', { cx: x.toFixed(1), cy: y.toFixed(1), r: R * 0.62 + grow, class: `deploy-ring ${side}` }));
      }
    }
    svg.append(deploy);
    // Hexsides, to be clicked with the river and bridge tools.
    const sides = node('g', { class: 'sides' });
    for (let c = 1; c <= columns; c += 1) {
      for (let r = 1; r <= rows; r += 1) {
        const hex = hexName(c, r);
        for (const d of [2, 3, 1]) {
          const other = neighbour(hex, d);
          if (!other) continue;
          const side = sideName(hex, other);
          const e = sideEnds(side);
          sides.append(node('line', { x1: e.x1.toFixed(1), y1: e.y1.toFixed(1), x2: e.x2.toFixed(1), y2: e.y2.toFixed(1), 'data-side': side, class: 'side' }));
        }
      }
    }
    svg.append(sides);
    const [cx, cy] = centre(cursor);
    svg.append(node('polygon', { points: points(cx, cy, R - 2), class: 'cursor', id: 'cursor' }));
    svg.addEventListener('click', onClick);
    svg.addEventListener('keydown', onKey);
    const focused = document.activeElement && document.activeElement.id === 'edit-svg';
    $('edit-map').replaceChildren(svg);
    if (focused) svg.focus();
    describeCursor();
  }

  function describeCursor() {
    const parts = [`Hex ${cursor}`];
    const city = cityAt(cursor);
    if (city) parts.push(`city ${city.letter}${city.name ? ` (${city.name})` : ''}, held by ${city.control ? Adj.sideName(city.control) : 'nobody'}`);
    else if (model.map.woods.includes(cursor)) parts.push('woods');
    else parts.push('clear');
    const lines = model.map.rail.filter((l) => l.hexes.includes(cursor)).map((l) => l.name);
    if (lines.length) parts.push(`rail: ${lines.join(', ')}`);
    $('cursor-line').textContent = `${parts.join(' · ')}.`;
  }

  function drawLines() {
    const pick = (list, current, id, what) => {
      $(id).replaceChildren(...list.map((x, i) => el('option', { value: i, selected: i === current }, `${x.name || `(unnamed ${what})`} — ${(x.hexsides || x.hexes).length}`)));
    };
    pick(model.map.rivers, river, 'river-pick', 'river');
    pick(model.map.rail, rail, 'rail-pick', 'line');
    $('river-name').value = model.map.rivers[river] ? model.map.rivers[river].name : '';
    $('rail-name').value = model.map.rail[rail] ? model.map.rail[rail].name : '';
  }

  function drawDetails() {
    $('sc-name').value = model.name || '';
    $('sc-title').value = model.title || '';
    $('sc-note').value = model.note || '';
    $('sc-turns').value = model.turns || '';
    $('sc-first').value = model.first_side || 'union';
    $('sc-reinforce').value = model.reinforcement.confederate_cities.join(' ');
  }

  function drawCities() {
    const rows = model.map.cities.map((city, i) => {
      const input = (key, label, attrs) => {
        const field = el('input', Object.assign({ value: city[key] || '', 'aria-label': `${label} of city ${city.letter}`, autocomplete: 'off', class: `city-${key}` }, attrs || {}));
        // The row is mended in place, not drawn again, so the focus stays where the keyboard left it.
        field.addEventListener('change', () => {
          const was = city[key];
          city[key] = key === 'letter' ? field.value.trim().toUpperCase() : field.value;
          if (key === 'letter') {
            renameLetter(was, city[key]);
            const row = field.closest('tr');
            row.dataset.city = city[key];
            for (const labelled of row.querySelectorAll('[aria-label]')) {
              labelled.setAttribute('aria-label', labelled.getAttribute('aria-label').replace(`city ${was}`, `city ${city[key]}`));
            }
            row.querySelector('button.remove').textContent = `Remove ${city[key]}`;
          }
          drawMap();
          changed();
        });
        return field;
      };
      const holder = el('select', { 'aria-label': `Who holds city ${city.letter}`, class: 'city-control' },
        ...[['', 'nobody'], ['union', 'the Union'], ['confederate', 'the Rebels']].map(([v, t]) => el('option', { value: v, selected: (city.control || '') === v }, t)));
      holder.addEventListener('change', () => {
        if (holder.value) city.control = holder.value;
        else delete city.control;
        drawMap();
        changed();
      });
      const deploys = (side) => {
        const box = el('input', { type: 'checkbox', checked: model.deployment[side].includes(city.letter), class: `deploy-${side}`,
          'aria-label': `${Adj.sideName(side)} deploys near city ${city.letter}` });
        box.addEventListener('change', () => {
          toggleDeployment(side, city.letter, box.checked);
          drawMap();
          changed();
        });
        return box;
      };
      const remove = el('button', { type: 'button', class: 'remove' }, `Remove ${city.letter}`);
      remove.addEventListener('click', () => {
        model.map.cities.splice(model.map.cities.indexOf(city), 1);
        renameLetter(city.letter, null);
        drawMap();
        drawCities();
        changed();
      });
      return el('tr', { 'data-city': city.letter }, el('td', {}, input('letter', 'Letter', { maxlength: 1, size: 2 })), el('td', {}, input('name', 'Name')),
        el('td', {}, city.hex), el('td', {}, holder), el('td', {}, deploys('union')), el('td', {}, deploys('confederate')), el('td', {}, remove));
    });
    $('cities').querySelector('tbody').replaceChildren(...rows);
  }

  /** A city's letter changed (or the city removed: `to` null) where deployment, victory and reinforcement name it. */
  function renameLetter(from, to) {
    if (!from) return;
    for (const side of ['union', 'confederate']) {
      model.deployment[side] = model.deployment[side].flatMap((l) => (l === from ? (to ? [to] : []) : [l]));
    }
    model.reinforcement.confederate_cities = model.reinforcement.confederate_cities.flatMap((l) => (l === from ? (to ? [to] : []) : [l]));
    for (const v of model.victory) if (v.capture === from && to) v.capture = to;
    drawDetails();
    drawVictory();
  }

  function toggleDeployment(side, letter, on) {
    const list = model.deployment[side].filter((l) => l !== letter);
    if (on) list.push(letter);
    model.deployment[side] = list;
  }

  function drawVictory() {
    const rows = model.victory.map((v, i) => {
      const capture = el('input', { value: v.capture || '', 'aria-label': `City to capture for victory condition ${i + 1}`, maxlength: 1, size: 2, class: 'victory-capture', autocomplete: 'off' });
      capture.addEventListener('change', () => {
        const letter = capture.value.trim().toUpperCase();
        if (letter) {
          v.capture = letter;
          delete v.hold_out;
        } else {
          delete v.capture;
          delete v.by_turn;
          v.hold_out = true;
        }
        changed();
      });
      const byTurn = el('input', { type: 'number', min: 1, value: v.by_turn || '', 'aria-label': `By turn, victory condition ${i + 1}`, class: 'victory-turn' });
      byTurn.addEventListener('change', () => {
        if (byTurn.value) v.by_turn = Number(byTurn.value);
        else delete v.by_turn;
        changed();
      });
      const text = el('input', { value: v.text || '', 'aria-label': `Text of victory condition ${i + 1}`, class: 'victory-text', autocomplete: 'off' });
      text.addEventListener('change', () => {
        v.text = text.value;
        changed();
      });
      return el('tr', { 'data-victory': i }, el('td', {}, Adj.sideName(v.side)), el('td', {}, v.level), el('td', {}, capture), el('td', {}, byTurn), el('td', {}, text));
    });
    $('victory').querySelector('tbody').replaceChildren(...rows);
  }

  function drawUnits() {
    const tables = ['union', 'confederate'].map((side) => {
      const list = model.units[side];
      const rows = list.map((u, i) => {
        const field = (key, label, attrs) => {
          const input = el('input', Object.assign({ value: u[key] === undefined ? '' : u[key], 'aria-label': `${label} of ${side} unit ${i + 1}`, autocomplete: 'off', class: `unit-${key}` }, attrs || {}));
          input.addEventListener('change', () => {
            u[key] = key === 'factors' ? Number(input.value) : input.value;
            changed();
          });
          return input;
        };
        const arm = el('select', { 'aria-label': `Arm of ${side} unit ${i + 1}`, class: 'unit-arm' },
          ...['infantry', 'cavalry', 'artillery', 'hq'].map((a) => el('option', { value: a, selected: u.arm === a }, a)));
        arm.addEventListener('change', () => {
          u.arm = arm.value;
          changed();
        });
        const remove = el('button', { type: 'button', class: 'remove' }, 'Remove');
        remove.addEventListener('click', () => {
          list.splice(i, 1);
          drawUnits();
          changed();
        });
        return el('tr', {}, el('td', {}, field('id', 'Id')), el('td', {}, field('name', 'Name')), el('td', {}, arm),
          el('td', {}, field('factors', 'Factors', { type: 'number', min: 0, max: 99 })), el('td', {}, remove));
      });
      const add = el('button', { type: 'button', class: 'add-unit' }, `Add a unit for ${Adj.sideName(side)}`);
      add.addEventListener('click', () => {
        const prefix = side === 'union' ? 'us' : 'cs';
        let n = list.length + 1;
        while (list.some((u) => u.id === `${prefix}-new-${n}`)) n += 1;
        list.push({ id: `${prefix}-new-${n}`, name: `New unit ${n}`, arm: 'infantry', factors: 1 });
        drawUnits();
        changed();
      });
      return el('div', { class: 'scroll' }, el('table', { class: 'figures', id: `units-${side}` },
        el('caption', {}, side === 'union' ? 'The Union' : 'The Rebels'),
        el('thead', {}, el('tr', {}, ...['Id', 'Name', 'Arm', 'Factors', ''].map((h) => el('th', { scope: 'col' }, h || el('span', { class: 'visually-hidden' }, 'Remove'))))),
        el('tbody', {}, ...rows)), add);
    });
    $('oob').replaceChildren(...tables);
  }

  // ------------------------------------------------------------------ tools

  const tool = () => (document.querySelector('input[name=tool]:checked') || {}).value || 'woods';
  const hints = {
    woods: 'Click a hex to make it woods, or clear again.',
    city: 'Click a clear hex to place a city with the next free letter; click a city to select its row below. Name it and say who holds it there.',
    river: 'Click a hexside to put it on the river picked below, or to take a river off it.',
    bridge: 'Click a river hexside to put a bridge of the kind picked below on it, or to take its bridge off.',
    rail: 'Click hexes in order to lay the rail line picked below; each must touch the one before. Click its last hex again to take it back.',
    deploy: 'Click a city to let the side picked below deploy within 1 hex of it, or no longer.',
  };

  function showTool() {
    const t = tool();
    $('tool-hint').textContent = hints[t];
    for (const name of ['river', 'bridge', 'rail', 'deploy']) $(`opt-${name}`).hidden = name !== t;
    const svg = $('edit-svg');
    if (svg) svg.setAttribute('class', `tool-${t}`);
  }

  function onClick(event) {
    const target = event.target;
    if (target.dataset && target.dataset.side) {
      useOnSide(target.dataset.side);
    } else if (target.dataset && target.dataset.hex) {
      cursor = target.dataset.hex;
      useOnHex(cursor);
    }
  }

  function onKey(event) {
    const moves = { ArrowUp: 0, ArrowDown: 3, ArrowLeft: -1, ArrowRight: 1 };
    if (event.key in moves) {
      event.preventDefault();
      let c = colOf(cursor);
      let r = rowOf(cursor);
      if (event.key === 'ArrowUp') r -= 1;
      if (event.key === 'ArrowDown') r += 1;
      if (event.key === 'ArrowLeft') c -= 1;
      if (event.key === 'ArrowRight') c += 1;
      if (onMap(c, r)) cursor = hexName(c, r);
      const [x, y] = centre(cursor);
      $('cursor').setAttribute('points', points(x, y, R - 2));
      $('cursor').scrollIntoView({ block: 'nearest', inline: 'nearest' });
      describeCursor();
    } else if (event.key === 'Enter' || event.key === ' ') {
      event.preventDefault();
      useOnHex(cursor);
    } else if (/^[1-6]$/.test(event.key)) {
      event.preventDefault();
      const other = neighbour(cursor, Number(event.key) - 1);
      if (other) useOnSide(sideName(cursor, other));
    }
  }

  function useOnHex(hex) {
    const t = tool();
    const city = cityAt(hex);
    if (t === 'woods') {
      if (city) return say(`Hex ${hex} holds city ${city.letter}: a city is not woods.`);
      const at = model.map.woods.indexOf(hex);
      if (at >= 0) model.map.woods.splice(at, 1);
      else model.map.woods.push(hex);
    } else if (t === 'city') {
      if (city) {
        const row = $('cities').querySelector(`tr[data-city='${city.letter}'] input.city-name`);
        if (row) row.focus();
        return undefined;
      }
      const used = new Set(model.map.cities.map((c) => c.letter));
      const letter = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ'.split('').find((l) => !used.has(l));
      if (!letter) return say('Every letter A–Z names a city already.');
      model.map.woods = model.map.woods.filter((w) => w !== hex);
      model.map.cities.push({ letter, name: `City ${letter}`, hex });
      drawCities();
    } else if (t === 'rail') {
      if (!model.map.rail.length) newLine();
      const line = model.map.rail[rail];
      if (line.hexes[line.hexes.length - 1] === hex) line.hexes.pop();
      else line.hexes.push(hex);
      drawLines();
    } else if (t === 'deploy') {
      if (!city) return say(`Hex ${hex} holds no city: a side deploys near cities.`);
      const side = $('deploy-side').value;
      toggleDeployment(side, city.letter, !model.deployment[side].includes(city.letter));
      drawCities();
    } else {
      return say('This tool works on hexsides: click the edge between two hexes, or press 1–6.');
    }
    drawMap();
    changed();
    return undefined;
  }

  function useOnSide(side) {
    const t = tool();
    if (t === 'river') {
      const held = riverOf(side);
      if (held >= 0) {
        const list = model.map.rivers[held].hexsides;
        list.splice(list.findIndex((s) => canonical(s) === side), 1);
        const b = bridgeAt(side);
        if (b >= 0) model.map.bridges.splice(b, 1);
      } else {
        if (!model.map.rivers.length) newRiver();
        model.map.rivers[river].hexsides.push(side);
      }
      drawLines();
    } else if (t === 'bridge') {
      const b = bridgeAt(side);
      if (b >= 0) model.map.bridges.splice(b, 1);
      else if (riverOf(side) < 0) return say(`Hexside ${side} has no river: a bridge sits on a river.`);
      else model.map.bridges.push({ hexside: side, kind: $('bridge-kind').value });
    } else {
      const [a] = side.split('/');
      return useOnHex(a);
    }
    drawMap();
    changed();
    return undefined;
  }

  function newRiver() {
    model.map.rivers.push({ name: `River ${model.map.rivers.length + 1}`, hexsides: [] });
    river = model.map.rivers.length - 1;
    drawLines();
  }

  function newLine() {
    model.map.rail.push({ name: `Rail line ${model.map.rail.length + 1}`, hexes: [] });
    rail = model.map.rail.length - 1;
    drawLines();
  }

  function say(text) {
    $('cursor-line').textContent = text;
  }

  // ------------------------------------------------------------------ the server's check

  let timer = null;
  function changed() {
    changes += 1;
    saved = null;
    $('check-status').textContent = 'Checking…';
    clearTimeout(timer);
    timer = setTimeout(check, 400);
  }

  /** Drops empty lines, which the format refuses and the editor leaves when a line is taken back. */
  function cleaned() {
    const s = JSON.parse(JSON.stringify(model));
    s.map.rivers = s.map.rivers.filter((rv) => rv.hexsides.length);
    s.map.rail = s.map.rail.filter((l) => l.hexes.length);
    return s;
  }

  async function check() {
    const asked = changes;
    let answer;
    try {
      answer = await api('POST', '/v1/scenarios/check', token, { scenario: cleaned() });
    } catch (e) {
      $('check-status').textContent = `Not checked: ${e.message}. Your work is kept on this page; it is checked again at the next change.`;
      return;
    }
    if (asked !== changes) return;
    if (!answer.ok) {
      $('check-status').textContent = `Not checked: ${answer.detail}`;
      return;
    }
    checked = answer.data;
    const problems = checked.problems;
    $('problems').replaceChildren(...problems.map((p) => el('li', { class: 'problem' },
      el('code', {}, p.field.replace(/^body\.scenario\.?/, '') || 'scenario'), ` ${p.detail} `, el('span', { class: 'rule' }, `(${p.rule})`))));
    $('check-status').textContent = problems.length
      ? `${problems.length} ${problems.length === 1 ? 'problem' : 'problems'} to mend before it can be saved.`
      : 'No problems: this scenario can be saved.';
    $('check-status').dataset.problems = String(problems.length);
    $('preview-box').hidden = !checked.svg;
    if (checked.svg) $('preview').src = `data:image/svg+xml;charset=utf-8,${encodeURIComponent(checked.svg)}`;
  }

  // ------------------------------------------------------------------ TOML, saving, campaigns

  /** A TOML string: JSON's escapes are TOML's, but for DEL, which TOML wants escaped too. */
  const tomlString = (s) => JSON.stringify(s).replace(/\u007f/g, '\\u007F');
  const isTable = (v) => v !== null && typeof v === 'object' && !Array.isArray(v);
  const isTables = (v) => Array.isArray(v) && v.length > 0 && v.every(isTable);
  function tomlValue(v) {
    if (typeof v === 'string') return tomlString(v);
    if (Array.isArray(v)) return `[${v.map(tomlValue).join(', ')}]`;
    if (isTable(v)) return `{ ${Object.entries(v).filter(([, x]) => x !== null && x !== undefined).map(([k, x]) => `${tomlKey(k)} = ${tomlValue(x)}`).join(', ')} }`;
    return String(v);
  }
  const tomlKey = (k) => (/^[A-Za-z0-9_-]+$/.test(k) ? k : tomlString(k));

  /** The scenario as TOML: plain keys first, then its tables and arrays of tables, as the format is written. */
  function toToml(table, path) {
    const out = [];
    const later = [];
    for (const [k, v] of Object.entries(table)) {
      if (v === null || v === undefined) continue;
      if (isTable(v) || isTables(v)) later.push([k, v]);
      else out.push(`${tomlKey(k)} = ${tomlValue(v)}`);
    }
    for (const [k, v] of later) {
      const name = path ? `${path}.${tomlKey(k)}` : tomlKey(k);
      if (isTable(v)) {
        out.push('', `[${name}]`, ...toToml(v, name));
      } else {
        for (const item of v) out.push('', `[[${name}]]`, ...toToml(item, name));
      }
    }
    return out;
  }

  function download() {
    const text = `${toToml(cleaned(), '').join('\n').replace(/^\n+/, '')}\n`;
    const link = el('a', { href: URL.createObjectURL(new Blob([text], { type: 'application/toml' })), download: `${model.name || 'scenario'}.toml` });
    document.body.append(link);
    link.click();
    link.remove();
  }

  async function save(form) {
    if (saved) return saved;
    const answer = await Adj.submit(form, () => api('POST', '/v1/scenarios', token, { name: $('save-name').value.trim(), scenario: cleaned() }));
    if (!answer || !answer.ok) {
      if (answer && answer.data && Array.isArray(answer.data.errors)) check();
      return null;
    }
    saved = answer.data;
    $('saved').replaceChildren(el('p', { id: 'saved-line' }, `Saved as ${saved.name}: `, el('code', { class: 'scenario-id' }, saved.id),
      '. ', el('a', { href: `/v1/scenarios/${saved.id}/map.png` }, 'map picture'), ' · ', el('a', { href: '/console' }, 'create campaigns from it in the console')));
    listScenarios();
    return saved;
  }

  function wire() {
    $('form-new').addEventListener('submit', async (event) => {
      event.preventDefault();
      const form = event.target;
      const columns = Number($('new-columns').value);
      const rows = Number($('new-rows').value);
      const refusal = form.querySelector('.refusal');
      refusal.textContent = '';
      if (!(columns >= 2 && columns <= 40 && rows >= 2 && rows <= 40)) {
        refusal.textContent = 'A map is 2 to 40 hexes each way.';
        return;
      }
      if (!token) {
        refusal.textContent = 'Sign in with your moderator token first.';
        return;
      }
      const seed = await read('short-acw');
      if (seed.error) {
        refusal.textContent = `The seed's orders of battle cannot be read: ${seed.error}`;
        return;
      }
      const s = seed.scenario;
      start({ name: 'new-scenario', title: 'New scenario', first_side: s.first_side, turns: s.turns,
        map: { columns, rows, woods: [], cities: [], rivers: [], bridges: [], rail: [] },
        deployment: { union: [], confederate: [] }, units: s.units, victory: s.victory, movement: s.movement,
        reinforcement: Object.assign({}, s.reinforcement, { confederate_cities: [] }) }, '');
    });
    $('form-open').addEventListener('submit', async (event) => {
      event.preventDefault();
      const refusal = event.target.querySelector('.refusal');
      refusal.textContent = '';
      const id = $('open-pick').value;
      if (!id) return;
      const found = await read(id);
      if (found.error) {
        refusal.textContent = `Not opened: ${found.error}`;
        return;
      }
      start(found.scenario, found.view.source === 'uploaded' ? `${found.view.name} (edited)` : '');
    });
    $('open-file').addEventListener('change', async () => {
      const refusal = $('form-open').querySelector('.refusal');
      refusal.textContent = '';
      const file = $('open-file').files[0];
      if (!file) return;
      const answer = await api('POST', '/v1/scenarios/check', token, { text: await file.text() });
      if (answer.ok && answer.data.scenario) {
        start(answer.data.scenario, file.name.replace(/\.toml$/i, ''));
      } else {
        const first = answer.ok ? answer.data.problems[0] : null;
        refusal.textContent = `Not opened: ${first ? `${first.field}: ${first.detail}` : answer.detail}`;
      }
      $('open-file').value = '';
    });
    for (const radio of document.querySelectorAll('input[name=tool]')) radio.addEventListener('change', showTool);
    showTool();
    $('river-pick').addEventListener('change', () => { river = Number($('river-pick').value); drawLines(); });
    $('rail-pick').addEventListener('change', () => { rail = Number($('rail-pick').value); drawLines(); drawMap(); });
    $('river-new').addEventListener('click', () => { newRiver(); });
    $('rail-new').addEventListener('click', () => { newLine(); drawMap(); });
    $('river-name').addEventListener('change', () => {
      if (!model.map.rivers.length) newRiver();
      model.map.rivers[river].name = $('river-name').value;
      drawLines();
      changed();
    });
    $('rail-name').addEventListener('change', () => {
      if (!model.map.rail.length) newLine();
      model.map.rail[rail].name = $('rail-name').value;
      drawLines();
      changed();
    });
    const detail = (id, apply) => $(id).addEventListener('change', () => { apply($(id).value); changed(); });
    detail('sc-name', (v) => { model.name = v; });
    detail('sc-title', (v) => { model.title = v; });
    detail('sc-note', (v) => { if (v) model.note = v; else delete model.note; });
    detail('sc-turns', (v) => { model.turns = Number(v); });
    detail('sc-first', (v) => { model.first_side = v; });
    detail('sc-reinforce', (v) => { model.reinforcement.confederate_cities = v.toUpperCase().split(/[^A-Z]+/).filter(Boolean); });
    $('form-details').addEventListener('submit', (event) => event.preventDefault());
    $('download').addEventListener('click', download);
    $('form-save').addEventListener('submit', (event) => {
      event.preventDefault();
      save(event.target);
    });
    $('form-campaign').addEventListener('submit', async (event) => {
      event.preventDefault();
      const form = event.target;
      if (!$('save-name').value.trim()) $('save-name').value = $('campaign-name').value.trim();
      const scenario = await save($('form-save'));
      if (!scenario) {
        form.querySelector('.refusal').textContent = 'Not created: the scenario is not saved (see above).';
        return;
      }
      const answer = await Adj.submit(form, () => api('POST', '/v1/campaigns', token, { name: $('campaign-name').value, mode: 'managed', scenario: scenario.id }));
      if (answer && answer.ok) {
        const id = answer.data.id;
        $('editor-created').replaceChildren(el('p', { id: 'created' }, `Created ${answer.data.name}: `, el('code', { class: 'campaign-id' }, id), ' · ',
          el('a', { href: `/campaigns/${id}` }, 'its page'), ' · ', el('a', { href: '/console' }, 'invite its players in the console')));
      }
    });
  }

  wire();
})();
