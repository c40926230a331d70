// The module Web Worker that owns the model. It only dispatches protocol
// messages; the work is in loaded-model.js and generation.js.
import {Events, Verbs, errorReply, event, reply} from "./protocol.js";
import {deleteModel, storageUsage} from "./storage/model-files.js";
import {loadModel} from "./model/loaded-model.js";
import {generate, prefill, prepare} from "./decode/generation.js";

let model = null;          // LoadedModel
// cancel() stops the running generate (or prefill) and any queued before it: requests with an id up to this.
let cancelledUpTo = 0;
let latestGenerateId = 0;
let queue = Promise.resolve();  // load / generate / unload run one at a time

const post = (message, transfer = []) => self.postMessage(message, transfer);

// A macrotask boundary, so a "cancel" message sent during a step is seen
// before the next one (awaiting a resolved promise would not let it in).
const channel = new MessageChannel();
const waiting = [];
channel.port1.onmessage = () => waiting.shift()?.();
function yieldToEvents() {
  return new Promise((resolve) => { waiting.push(resolve); channel.port2.postMessage(null); });
}

function requireModel() {
  if (!model) throw new Error("no model is loaded: call load(folderUrl) first");
  return model;
}

async function runGenerate(id, {prompt, options = {}}) {
  const loaded = requireModel();
  const promptIds = typeof prompt === "string" ? loaded.tokenizer.encode(prompt) : prompt;
  return generate(loaded, promptIds, options, {
    isCancelled: () => id <= cancelledUpTo,
    yieldToEvents,
    onToken: ({tokenId, text, logits, special}) => {
      const data = {tokenId, text};
      if (special) data.special = true;
      if (logits) data.logits = logits;
      post(event(id, Events.TOKEN, data), logits ? [logits.buffer] : []);
    },
  });
}

async function runPrefill(id, {prompt, options = {}}) {
  const loaded = requireModel();
  const promptIds = typeof prompt === "string" ? loaded.tokenizer.encode(prompt) : prompt;
  return prefill(loaded, promptIds, {isCancelled: () => id <= cancelledUpTo, yieldToEvents}, options);
}

const serialHandlers = {
  async [Verbs.LOAD](id, {folderUrl, backend, dtype}) {
    if (model) { await model.release(); model = null; }
    model = await loadModel(folderUrl, {backend, dtype}, (data) => post(event(id, Events.PROGRESS, data)));
    return model.info;
  },
  [Verbs.GENERATE]: runGenerate,
  [Verbs.PREFILL]: runPrefill,
  async [Verbs.PREPARE](id, {logitsProcessors}) { return prepare(requireModel(), logitsProcessors); },
  async [Verbs.RESET]() { requireModel().prefix.clear(); return true; },
  async [Verbs.UNLOAD]() {
    if (model) { await model.release(); model = null; }
    return true;
  },
};

const immediateHandlers = {
  [Verbs.CANCEL]() { cancelledUpTo = latestGenerateId; return true; },
  [Verbs.TOKENIZE](id, {text}) { return requireModel().tokenizer.encode(text); },
  [Verbs.DETOKENIZE](id, {ids}) {
    if (!Array.isArray(ids) || ids.some((x) => !Number.isInteger(x))) throw new TypeError("detokenize expects an array of integer token ids");
    return requireModel().tokenizer.decode(ids);
  },
  // A prompt state still being written counts (and goes with the model).
  async [Verbs.STORAGE_USAGE]() { await model?.promptState.settled(); return storageUsage(); },
  async [Verbs.DELETE_MODEL](id, {folderUrl}) {
    await model?.promptState.settled();
    model?.promptState.forgetStored(folderUrl);
    return deleteModel(folderUrl);
  },
};

async function answer(id, work) {
  try {
    post(reply(id, await work()));
  } catch (error) {
    post(errorReply(id, error));
  }
}

self.onmessage = ({data: {id, verb, args = {}}}) => {
  if (immediateHandlers[verb]) {
    answer(id, () => immediateHandlers[verb](id, args));
  } else if (serialHandlers[verb]) {
    if (verb === Verbs.GENERATE || verb === Verbs.PREFILL) latestGenerateId = id;
    queue = queue.then(() => answer(id, () => serialHandlers[verb](id, args)));
  } else {
    post(errorReply(id, new Error(`unknown verb "${verb}"; known: ${Object.values(Verbs).join(", ")}`)));
  }
};
