// The demo page's WebMCP, both ways (web/ui/app.js connects it once): the enabled tools offered to
// the browser's agents while the person allows it (offer.js), and tools other scripts of this page
// registered offered to BotPsy's model (page-tools.js). Where the browser has no WebMCP nothing
// changes: the setting stays hidden and nothing is registered or read.
import { modelContextOf } from "./model-context.js";
import { ToolOffer } from "./offer.js";
import { PageTools } from "./page-tools.js";

/**
 * session: the page's AssistantSession; offerIsOn(): the person's setting; setting: the element
 * holding the checkbox (shown only here); onToolsChanged(): the agent's tool list changed.
 * Returns {update()}: call it after a model loads or goes, and after every settings change.
 */
export function connectWebMcp({ session, offerIsOn, setting, onToolsChanged = () => {} }) {
  const context = modelContextOf();
  if (!context) return { update() {} };
  if (setting) setting.hidden = false;
  const offer = new ToolOffer({ session, context, exclude: () => new Set(pageTools.names()) });
  const pageTools = new PageTools({
    session, context, skip: () => offer.names(),
    onChange: () => {
      onToolsChanged();
      offer.update(offerIsOn());
    },
  });
  return {
    update() {
      if (session.ready) pageTools.start();
      return offer.update(offerIsOn());
    },
  };
}
