// Section 7, trained heads: the library's trained-model elements, composed. The explorer's text is
// the generator's prompt and its switched-off heads are off in generation too; every model call
// is the elements' own.
import '../../lib/components/trained-elements.js';

export function composeTrained() {
  const explorer = document.querySelector('#explorer');
  const generate = document.querySelector('#generate');
  const sync = () => {
    generate.prompt = explorer.text || 'The ';
    generate.ablate = explorer.ablate;
  };
  explorer.addEventListener('change', sync);
  sync();
}
