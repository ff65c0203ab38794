/** Bad input data at a line of the input: the import stops there (everything before it is stored). */
export class InputError extends Error {
  readonly line: number;

  constructor(line: number, message: string) {
    super(message);
    this.line = line;
  }
}
