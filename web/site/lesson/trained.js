// Sections 6 and 7: the library's trained-model elements, composed (section 6's grouped-query twins
// and story need nothing from the page). The explorer's text is the generator's prompt, its model
// the generator's model, and its switched-off heads are off in generation too; every model call is
// the elements' own.
import '../../lib/components/trained-elements.js';

export function composeTrained() {
  const explorer = document.querySelector('#explorer');
  const generate = document.querySelector('#generate');
  const sync = () => {
    generate.prompt = explorer.text || 'The ';
    generate.ablate = explorer.ablate;
    // the model picked in the explorer writes the text too
    if (explorer.model) generate.model = explorer.model;
  };
  explorer.addEventListener('change', sync);
  sync();
}
