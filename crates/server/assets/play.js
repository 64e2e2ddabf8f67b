// The player's page: the state and map of a managed campaign with its orders as forms, or the
// generated action forms of a resolver campaign; the log kept current by the event stream.
'use strict';

(() => {
  const { el, api } = Adj;
  const body = document.body;
  const campaign = body.dataset.campaign;
  const managed = body.dataset.mode === 'managed';
  const $ = (id) => document.getElementById(id);
  let token = null;
  let me = null;
  let game = null;
  /** What each side may post now, as the server says (`may_post` of the state). */
  let mayPost = {};
  /** The campaign clock (deadlines, a pause) as the state gave it, and when it was read. */
  let clock = null;
  let clockFetched = 0;
  /** While this side deploys: the hexes of its deployment zone. */
  let zone = new Set();
  const deploying = () => game && game.phase === 'deployment' && me && (mayPost[me.side] || []).includes('deploy');
  let chosen = null;
  let reach = [];

  Adj.signIn(`adjutant.token.${campaign}`, (t, who) => {
    token = t;
    me = who;
    wire();
    refresh();
    listen();
  });

  /** Every order form posts through one path: build the body, post, show the receipt. */
  function wire() {
    wireForms(document);
    if (managed) {
      $('map').addEventListener('click', (event) => {
        const hex = event.target.closest && event.target.closest('[data-hex]');
        if (hex) clickHex(hex.dataset.hex);
      });
    } else {
      actionForms();
    }
  }

  const words = (text) => text.split(/[\s,]+/).map((w) => w.trim()).filter(Boolean);
  const lines = (text) => text.split('\n').map((l) => words(l)).filter((l) => l.length);

  /**
   * The field a refusal names, in the player's words: the unit a placement, a retreat path or
   * an attacker stands for, by name; nothing for what the page sent on its own (the side).
   */
  function describeField(body, field) {
    const path = field.replace(/^body\.body\./, '').replace(/^body\./, '');
    if (path === 'side' || path === 'kind') return '';
    const item = path.match(/^(placements|paths|units|factors|order)\[(\d+)\]/);
    if (item) {
      const entry = (body[item[1]] || [])[Number(item[2])];
      const id = typeof entry === 'string' ? entry : entry && entry.unit;
      const unit = game && game.units.find((u) => u.id === id);
      if (unit) return unit.name;
      if (id) return String(id);
    }
    if (path === 'unit' && body.unit) {
      const unit = game && game.units.find((u) => u.id === body.unit);
      return unit ? unit.name : String(body.unit);
    }
    return path ? `(${path})` : '';
  }

  /** The post a form stands for. */
  function build(form) {
    const kind = form.dataset.kind;
    switch (kind) {
      case 'deploy':
        return { kind, body: { placements: Array.from(form.querySelectorAll('input[data-unit]'))
          .filter((i) => i.value.trim()).map((i) => ({ unit: i.dataset.unit, hex: i.value.trim() })) } };
      case 'move':
        return { kind, body: { unit: $('move-unit').value, path: words($('move-path').value) } };
      case 'attack':
        return { kind, body: { units: Array.from(form.querySelectorAll('input[type=checkbox]:checked')).map((c) => c.value),
          target: $('attack-target').value.trim() } };
      case 'casualty_order':
        return { kind, body: { order: words($('casualty-order').value) } };
      case 'retreat':
        return { kind, body: { paths: lines($('retreat-paths').value).map(([unit, ...path]) => ({ unit, path })) } };
      case 'cavalry_option': {
        const b = { retreat: $('cavalry-retreat').checked };
        if ($('cavalry-hex').value.trim()) b.hex = $('cavalry-hex').value.trim();
        return { kind, body: b };
      }
      case 'reinforce': {
        const b = { factors: lines($('reinforce-factors').value).map(([unit, f]) => {
          const factors = Number(f);
          if (!Number.isInteger(factors)) throw new Error(`give ${unit} a whole number of factors`);
          return { unit, factors };
        }) };
        const name = $('new-unit-name').value;
        if (name.trim()) {
          const factors = Number($('new-unit-factors').value || '0');
          if (!Number.isInteger(factors)) throw new Error('give the new unit a whole number of factors');
          b.new_units = [{ name, arm: $('new-unit-arm').value, hex: $('new-unit-hex').value.trim(), factors }];
        }
        return { kind, body: b };
      }
      case 'seal':
        return { kind, body: { topic: $('seal-topic').value.trim(), role: $('seal-role').value, choice: $('seal-choice').value } };
      case 'resolve':
        return { kind, body: resolveBody(form) };
      default:
        return { kind, body: {} };
    }
  }

  async function refresh() {
    if (managed) {
      const answer = await api('GET', `/v1/campaigns/${campaign}/state`);
      if (!answer.ok) return;
      game = answer.data.state;
      mayPost = answer.data.may_post || {};
      clock = answer.data.clock || null;
      clockFetched = Date.now();
      zone = new Set(((answer.data.deployment_zones || {})[me && me.side]) || []);
      const changed = body.dataset.after !== String(answer.data.after_seq);
      showTurn();
      showUnits();
      // A new state: what the chosen unit could reach before is asked again (after a move it
      // can reach nothing more), so no highlight outlives the state it was drawn for.
      if (changed && chosen && !deploying()) await choose(chosen);
      await showMap();
      body.dataset.after = String(answer.data.after_seq);
    } else {
      $('turn-line').textContent = 'The referee keeps the table: resolve actions below.';
      body.dataset.after = String(await showSeals());
    }
  }

  /** The deadline line, counted down every second until the next state. */
  function showClock() {
    const line = $('clock-line');
    line.hidden = !clock;
    line.dataset.status = clock ? clock.status : '';
    if (clock) line.textContent = Adj.clockLine(clock, me && me.side, clockFetched);
  }
  setInterval(() => { if (clock) showClock(); }, 1000);

  function showTurn() {
    showClock();
    const side = me && me.side;
    if (game.result) {
      $('turn-line').textContent = `The game is over: ${game.result.condition}`;
    } else if (game.phase === 'deployment') {
      $('turn-line').textContent = deploymentLine(side);
    } else {
      $('turn-line').textContent = turnLine(side);
    }
    // The forms: what this side may post now stands out, the rest is shown as not now.
    const mine = new Set(side ? (mayPost[side] || []) : []);
    for (const form of document.querySelectorAll('form.order')) {
      const kind = form.dataset.kind;
      if (kind === 'deploy') continue;
      form.classList.toggle('not-now', !mine.has(kind));
    }
    // The Rebel reinforcement post first, while it can still be made.
    const rollFirst = mine.has('reinforcement');
    $('roll-first').hidden = !rollFirst;
    if (rollFirst) $('roll-first').append($('form-reinforcement'));
    else if ($('form-reinforcement').parentElement.id === 'roll-first') $('form-resolve_attack').before($('form-reinforcement'));
    const awaited = new Set();
    $('awaiting').replaceChildren(...(game.awaiting || []).map((a) => {
      const mine = a.side === side;
      if (mine) awaited.add(a.kind);
      return el('li', { class: mine ? 'mine' : '' }, mine ? `You: ${a.detail}` : `Waiting for ${Adj.sideName(a.side)}: ${a.detail}`);
    }));
    for (const form of document.querySelectorAll('form.order')) form.classList.toggle('awaited', awaited.has(form.dataset.kind));
    const p = game.reinforcement_points || {};
    $('points').textContent = `Reinforcement points stored: Union ${p.union}, Rebels ${p.confederate}.`;
  }

  /** The kinds a side may post, in words: "reinforce, move, attack or end_turn". */
  function kindsInWords(kinds) {
    if (!kinds.length) return 'nothing';
    return kinds.length === 1 ? kinds[0] : `${kinds.slice(0, -1).join(', ')} or ${kinds[kinds.length - 1]}`;
  }

  /** Who acts now and with what: one line from the server's `may_post`, never two stories. */
  function turnLine(side) {
    const head = `Turn ${game.turn}, ${game.phase} phase`;
    const acting = Object.entries(mayPost).filter(([, kinds]) => kinds.length);
    if (!acting.length) return `${head}: nobody can post now.`;
    const parts = acting.map(([who, kinds]) => (who === side
      ? `you (${Adj.sideName(who)}) may post ${kindsInWords(kinds)}`
      : `${Adj.sideName(who)} may post ${kindsInWords(kinds)}`));
    const waiting = game.battle ? ` Battle ${game.battle.number} at ${game.battle.target} waits for an answer:` : '';
    return `${head}.${waiting} ${parts.join('; ')}.`;
  }

  /** Whether a side has deployed, and whether its deployment is sealed (deployed, yet off the map). */
  const deployedSealed = (side) => (game.deployed || []).includes(side)
    && game.units.filter((u) => u.side === side && !u.eliminated).every((u) => !u.hex);

  /** Deployment: who has deployed, and what stays sealed until both have. */
  function deploymentLine(side) {
    const other = side === 'union' ? 'confederate' : 'union';
    const done = (game.deployed || []);
    if (side && done.includes(side)) {
      return deployedSealed(side)
        ? `Deployment: your units are placed, sealed until ${Adj.sideName(other)} have deployed; then both deployments are shown together.`
        : `Deployment: your units are placed; waiting for ${Adj.sideName(other)}.`;
    }
    if (side && done.includes(other)) {
      return deployedSealed(other)
        ? `Deployment: ${Adj.sideName(other)} have deployed, sealed: you see where once you have deployed too. Place your units.`
        : `Deployment: ${Adj.sideName(other)} have deployed. Place your units.`;
    }
    return 'Deployment: both sides place their units; the first deployment stays sealed until the second is in.';
  }

  const mine = () => (game ? game.units.filter((u) => me && u.side === me.side && !u.eliminated) : []);

  /** Where a unit not on the map stands: sealed, about to be deployed to a hex, or nowhere yet. */
  function placing(u) {
    if (deployedSealed(u.side)) return 'placed, sealed';
    const input = $(`deploy-${u.id}`);
    return input && input.value.trim() ? `to deploy in ${input.value.trim()}` : 'not placed';
  }

  function showUnits() {
    const units = mine();
    $('my-units').replaceChildren(...units.map((u) => el('li', {},
      el('button', { type: 'button', class: `unit${chosen === u.id ? ' chosen' : ''}`, 'data-unit': u.id, 'aria-pressed': chosen === u.id ? 'true' : 'false' },
        `${u.id} · ${u.factors} · ${u.hex || placing(u)}`))));
    for (const b of $('my-units').querySelectorAll('button')) b.addEventListener('click', () => choose(b.dataset.unit));
    const select = $('move-unit');
    const was = select.value;
    select.replaceChildren(...units.filter((u) => u.hex).map((u) => el('option', { value: u.id }, `${u.id} (${u.hex})`)));
    if (was) select.value = was;
    const boxes = $('attack-units');
    const checked = new Set(Array.from(boxes.querySelectorAll('input:checked')).map((c) => c.value));
    boxes.replaceChildren(...units.filter((u) => u.hex).map((u) => el('label', { class: 'check' },
      el('input', { type: 'checkbox', value: u.id, checked: checked.has(u.id), name: 'units' }), ` ${u.id} (${u.hex}, ${u.factors})`)));
    const rows = $('deploy-rows');
    const unplaced = units.filter((u) => !u.hex);
    if (game.phase === 'deployment' && unplaced.length && !rows.childElementCount) {
      rows.replaceChildren(...unplaced.map((u) => el('div', { class: 'row' },
        el('label', { for: `deploy-${u.id}` }, `${u.name} (${u.id}, ${u.factors})`),
        el('input', { id: `deploy-${u.id}`, 'data-unit': u.id, autocomplete: 'off', placeholder: 'hex', size: 5 }))));
    }
    $('form-deploy').hidden = game.phase !== 'deployment' || (game.deployed || []).includes(me && me.side);
  }

  async function choose(unit) {
    chosen = unit;
    if (deploying()) {
      // Deployment: the unit goes where the next click on a highlighted hex says.
      const u = game.units.find((x) => x.id === unit);
      $('destinations').replaceChildren(el('li', {}, `Click a highlighted hex of your deployment zone to place ${u ? u.name : unit}.`));
      showUnits();
      mark();
      return;
    }
    $('move-unit').value = unit;
    const answer = await api('GET', `/v1/campaigns/${campaign}/units/${encodeURIComponent(unit)}/moves`);
    reach = answer.ok ? answer.data.moves : [];
    const list = $('destinations');
    if (!answer.ok) {
      list.replaceChildren(el('li', {}, answer.detail));
    } else if (!reach.length) {
      list.replaceChildren(el('li', {}, `${unit} cannot move now.`));
    } else {
      list.replaceChildren(...reach.map((m) => el('li', {}, el('button', { type: 'button', class: 'dest', 'data-hex': m.hex },
        `${m.hex} (cost ${m.cost}${m.halts ? ', halts next to the enemy' : ''})`))));
      for (const b of list.querySelectorAll('button')) b.addEventListener('click', () => clickHex(b.dataset.hex));
    }
    showUnits();
    mark();
  }

  function clickHex(hex) {
    if (deploying() && chosen) {
      if (!zone.has(hex)) {
        $('destinations').replaceChildren(el('li', {}, `${hex} is not in your deployment zone: choose a highlighted hex.`));
        return;
      }
      const input = $(`deploy-${chosen}`);
      if (input) input.value = hex;
      // On to the next unit not placed yet.
      const next = Array.from(document.querySelectorAll('#deploy-rows input[data-unit]')).find((i) => !i.value.trim());
      if (next) choose(next.dataset.unit);
      else {
        chosen = null;
        $('destinations').replaceChildren(el('li', {}, 'Every unit is placed: check the list and press Deploy.'));
        showUnits();
        mark();
      }
      return;
    }
    const move = reach.find((m) => m.hex === hex);
    if (chosen && move) {
      $('move-unit').value = chosen;
      $('move-path').value = move.path.join(' ');
      $('form-move').querySelector('button').focus();
      return;
    }
    const here = mine().find((u) => u.hex === hex);
    if (here) choose(here.id);
  }

  /** Marks the chosen unit's legal destinations on the map. */
  function mark() {
    const hexes = new Set(reach.map((m) => m.hex));
    const zoneShown = deploying();
    for (const poly of $('map').querySelectorAll('[data-hex]')) {
      poly.classList.toggle('reach', hexes.has(poly.dataset.hex));
      poly.classList.toggle('zone', zoneShown && zone.has(poly.dataset.hex));
    }
  }

  /** The server's own map, inline so its hexes can be clicked. */
  async function showMap() {
    const response = await fetch(`/v1/campaigns/${campaign}/map.svg`);
    if (!response.ok) return;
    const doc = new DOMParser().parseFromString(await response.text(), 'image/svg+xml');
    const svg = doc.documentElement;
    if (svg.nodeName !== 'svg') return;
    // Each hex's polygon is followed, in the terrain group, by the text naming it.
    let polygon = null;
    const terrain = svg.querySelector('#terrain');
    for (const node of terrain ? Array.from(terrain.children) : []) {
      if (node.nodeName === 'polygon') polygon = node;
      else if (node.nodeName === 'text' && polygon) {
        polygon.setAttribute('data-hex', node.textContent.trim());
        polygon = null;
      }
    }
    const box = (svg.getAttribute('viewBox') || '').split(/\s+/).map(Number);
    if (box.length === 4 && box[2] > 0 && box[3] > 0) $('map').style.aspectRatio = `${box[2]} / ${box[3]}`;
    svg.removeAttribute('width');
    svg.removeAttribute('height');
    svg.setAttribute('role', 'img');
    svg.setAttribute('aria-label', 'Map of the campaign');
    $('map').replaceChildren(document.importNode(svg, true));
    mark();
  }

  /** One form per action of the ruleset, from its input schema, the example filled in. */
  async function actionForms() {
    const answer = await api('GET', `/v1/rulesets/${encodeURIComponent(body.dataset.ruleset)}`);
    if (!answer.ok) {
      $('action-forms').replaceChildren(el('p', {}, answer.detail));
      return;
    }
    $('action-forms').replaceChildren(...answer.data.actions.map((action) => {
      const form = el('form', { class: 'order', 'data-kind': 'resolve', 'data-action': action.name, id: `action-${action.name}` },
        el('fieldset', {}, el('legend', {}, action.name),
          el('p', { class: 'hint' }, `${action.summary} (${action.rule})`),
          fields(action.input_schema, action.example, `in-${action.name}`, []),
          el('label', { for: `sealed-${action.name}` }, 'Sealed choices to reveal (topic, optional)'),
          el('input', { id: `sealed-${action.name}`, 'data-sealed': '1', autocomplete: 'off' }),
          el('button', { type: 'submit' }, `Resolve ${action.name}`),
          el('p', { class: 'refusal', role: 'alert' })));
      return form;
    }));
    wireForms($('action-forms'));
  }

  function wireForms(root) {
    for (const form of root.querySelectorAll('form.order')) {
      form.addEventListener('submit', async (event) => {
        event.preventDefault();
        let built;
        try {
          built = build(form);
        } catch (e) {
          form.querySelector('.refusal').textContent = `Not sent: ${e.message}`;
          return;
        }
        // A move or an attack ends the reinforcement step: ask before the roll is lost.
        const side = me && me.side;
        const rollPending = side && (mayPost[side] || []).includes('reinforcement');
        if (rollPending && ['move', 'attack'].includes(built.kind)
          && !confirm('You have not made your reinforcement post this turn. Once a unit moves or attacks, the roll is lost for this turn. Go on anyway?')) {
          return;
        }
        const answer = await Adj.post(form, campaign, token, built.kind, built.body, (field) => describeField(built.body, field));
        if (answer && answer.ok) {
          showReceipt(answer.data);
          form.reset();
          refresh();
        }
      });
    }
  }

  /** Inputs for a JSON schema: objects as fieldsets, enums as choices, numbers, text, yes/no. */
  /** A schema as the form needs it: references followed, `const` and one-of-strings as enums, null left out. */
  function plain(schema, root) {
    schema = schema || {};
    if (schema.$ref && schema.$ref.startsWith('#/')) {
      let at = root;
      for (const key of schema.$ref.slice(2).split('/')) at = at && at[key];
      return Object.assign({}, plain(at, root), { description: schema.description || (at && at.description) });
    }
    if ('const' in schema) return Object.assign({}, schema, { enum: [schema.const], type: typeof schema.const });
    const branches = schema.anyOf || schema.oneOf;
    if (Array.isArray(branches)) {
      const kept = branches.map((b) => plain(b, root)).filter((b) => b.type !== 'null');
      const described = (s) => Object.assign({}, s, { description: schema.description || s.description });
      if (kept.length === 1) return described(kept[0]);
      if (kept.length && kept.every((b) => Array.isArray(b.enum))) {
        return described({ type: kept[0].type, enum: kept.flatMap((b) => b.enum) });
      }
    }
    return schema;
  }

  function fields(schema, example, id, path, required, root) {
    root = root || schema;
    schema = plain(schema, root);
    const type = Array.isArray(schema.type) ? schema.type.find((t) => t !== 'null') : schema.type;
    if (type === 'object' || schema.properties) {
      const box = el('div', { class: 'object' });
      for (let [name, sub] of Object.entries(schema.properties || {})) {
        const value = example && typeof example === 'object' ? example[name] : undefined;
        const required = (schema.required || []).includes(name);
        const inner = fields(sub, value, `${id}-${name}`, path.concat(name), required, root);
        sub = plain(sub, root);
        if (inner.tagName === 'DIV') {
          box.append(el('fieldset', {}, el('legend', {}, name), sub.description ? el('p', { class: 'hint' }, sub.description) : null, inner));
        } else {
          box.append(el('label', { for: `${id}-${name}` }, name + (required ? '' : ' (optional)'), sub.description ? el('span', { class: 'hint' }, ` — ${sub.description}`) : null), inner);
        }
      }
      return box;
    }
    const attrs = { id, 'data-path': JSON.stringify(path), 'data-type': type || 'json' };
    if (Array.isArray(schema.enum)) {
      const choices = schema.enum.map((v) => el('option', { value: JSON.stringify(v) }, String(v)));
      if (!required) choices.unshift(el('option', { value: '' }, '— (leave out)'));
      const select = el('select', attrs, choices);
      if (example !== undefined) select.value = JSON.stringify(example);
      return select;
    }
    if (type === 'boolean') return el('input', Object.assign(attrs, { type: 'checkbox', checked: example === true }));
    if (type === 'integer' || type === 'number') {
      return el('input', Object.assign(attrs, { type: 'number', step: type === 'integer' ? 1 : 'any',
        min: schema.minimum, max: schema.maximum, value: example === undefined ? '' : example }));
    }
    if (type === 'string') return el('input', Object.assign(attrs, { value: example === undefined ? '' : example, autocomplete: 'off' }));
    // Arrays and anything else: JSON text, with the example.
    return el('textarea', Object.assign(attrs, { rows: 2 }), example === undefined ? '' : JSON.stringify(example));
  }

  function resolveBody(form) {
    const inputs = {};
    for (const input of form.querySelectorAll('[data-path]')) {
      const path = JSON.parse(input.dataset.path);
      let value;
      const type = input.dataset.type;
      if (input.tagName === 'SELECT') {
        if (input.value === '') continue;
        value = JSON.parse(input.value);
      }
      else if (type === 'boolean') value = input.checked;
      else if (input.value.trim() === '') continue;
      else if (type === 'integer' || type === 'number') value = Number(input.value);
      else if (type === 'string') value = input.value;
      else {
        try {
          value = JSON.parse(input.value);
        } catch (e) {
          throw new Error(`${path.join('.')} is not JSON`);
        }
      }
      let at = inputs;
      for (const key of path.slice(0, -1)) at = at[key] = at[key] || {};
      at[path[path.length - 1]] = value;
    }
    const b = { action: form.dataset.action, inputs };
    const sealed = form.querySelector('[data-sealed]').value.trim();
    if (sealed) b.sealed = sealed;
    return b;
  }

  /** The sealed choices: who sealed what, hidden until both sides are in. */
  async function showSeals() {
    const answer = await api('GET', `/v1/campaigns/${campaign}/posts?limit=100`);
    if (!answer.ok) return '';
    const seals = answer.data.posts.filter((p) => p.kind === 'seal' && !p.void);
    $('seals').replaceChildren(seals.length ? el('ul', { id: 'seal-list' }, seals.map((p) => el('li', { class: `seal ${p.body.choice === 'sealed' ? 'hidden' : 'revealed'}` },
      `${p.body.topic}: ${Adj.sideName(p.side)} as ${p.body.role} — `,
      el('b', { class: 'choice' }, p.body.choice === 'sealed' ? 'sealed (not revealed yet)' : p.body.choice)))) : el('p', {}, 'No sealed choices yet.'));
    const posts = answer.data.posts;
    return posts.length ? posts[posts.length - 1].seq : 0;
  }

  /** "Your last order": the newest post this player made, from this page or (after a reload, or
   * from another device) from the log as the stream brings it. */
  let receiptSeq = 0;
  function showReceipt(post) {
    if (post.seq < receiptSeq) return;
    receiptSeq = post.seq;
    $('receipt').replaceChildren(Adj.receipt(post));
  }

  /** The log from the event stream: each post once, the state refreshed after it. */
  function listen() {
    const status = $('stream-status');
    const source = new EventSource(`/v1/campaigns/${campaign}/events`);
    let timer = null;
    source.addEventListener('open', () => { status.textContent = 'Live: new posts appear by themselves.'; });
    source.addEventListener('error', () => { status.textContent = 'Reconnecting…'; });
    source.addEventListener('post', (event) => {
      const post = JSON.parse(event.data);
      const old = $(`post-${post.seq}`);
      const item = Adj.postItem(post);
      if (me && me.id && post.author_id === me.id) showReceipt(post);
      if (old) old.replaceWith(item);
      else $('posts').prepend(item);
      $('posts').dataset.last = post.seq;
      if (post.kind === 'rollback' && !post.void) {
        // A rollback voids every post after the one it goes back to.
        for (let seq = post.body.to_seq + 1; seq < post.seq; seq += 1) {
          const voided = $(`post-${seq}`);
          if (voided) voided.classList.add('void');
        }
      }
      clearTimeout(timer);
      timer = setTimeout(refresh, 150);
    });
  }
})();
