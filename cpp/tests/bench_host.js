// Host functions of the kernel benchmark and test harness (em++ --js-library): plain imports, which every link mode
// supports (the relaxed-SIMD build's -O1 link with the Python metadata reader sees neither EM_ASM
// blocks nor a main(argc, argv)).
mergeInto(LibraryManager.library, {
  // Seconds of CPU time of this process (user + system) where Node's process.cpuUsage() exists,
  // else of wall time: on a shared machine CPU time is what the kernel actually cost.
  bench_cpu_seconds: function () {
    if (typeof process !== 'undefined' && process.cpuUsage) {
      const u = process.cpuUsage();
      return (u.user + u.system) / 1e6;
    }
    return performance.now() / 1e3;
  },
  // The i-th command-line argument after the script as a number (NaN when absent or not a number;
  // the word "tsv" gives 1, any other word 0).
  bench_arg: function (i) {
    const a = typeof process !== 'undefined' ? process.argv[2 + i] : undefined;
    if (a === undefined) return NaN;
    if (a === 'tsv') return 1;
    const x = Number(a);
    return Number.isFinite(x) ? x : 0;
  },
  // 1 when the i-th command-line argument after the script is the C string s, else 0.
  host_arg_equals: function (i, s) {
    const a = typeof process !== 'undefined' ? process.argv[2 + i] : undefined;
    return a !== undefined && a === UTF8ToString(s) ? 1 : 0;
  },
});
