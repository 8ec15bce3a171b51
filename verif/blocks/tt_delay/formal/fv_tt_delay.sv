`default_nettype none
// fv_tt_delay: the properties of rtl/tt_delay.v, a wrapper that instantiates it (top of tt_delay.sby).
//
// The solver drives d and rst freely and picks a cycle whose d the wrapper records; DEPTH cycles later q must
// equal it. With RESET = 1, a reset in those DEPTH cycles (the cycle of the record included) clears the word
// instead, and q must be zero; with RESET = 0, rst changes nothing. The delay line's state is a function of the
// last DEPTH cycles' inputs, so k-induction closes at a depth just over DEPTH without looking inside.
module fv_tt_delay #(
  parameter integer WIDTH = 3,
  parameter integer DEPTH = 2,
  parameter integer RESET = 1
) (
  input wire             clk,
  input wire             rst,
  input wire [WIDTH-1:0] d,
  input wire             tag_now  // free: the solver picks which cycle's d is followed
);

  wire [WIDTH-1:0] q;
  tt_delay #(.WIDTH(WIDTH), .DEPTH(DEPTH), .RESET(RESET)) dut (.clk(clk), .rst(rst), .d(d), .q(q));

  // The followed word: its value, the cycles since it was recorded, and whether a reset met it on the way.
  reg             busy = 1'b0;
  reg [WIDTH-1:0] word;
  reg [7:0]       age;
  reg             reset_met;
  always @(posedge clk) begin
    if (!busy && tag_now) begin
      busy      <= 1'b1;
      word      <= d;
      age       <= 8'd1;
      reset_met <= rst;
    end else if (busy) begin
      if (age == DEPTH) begin
        busy <= 1'b0;
      end
      age       <= age + 8'd1;
      reset_met <= reset_met || rst;
    end
  end

  wire due = busy && age == DEPTH;
  always @(*) begin
    // The wrapper's own bookkeeping: a followed word is at most DEPTH cycles old (this keeps the induction to
    // states whose record lies inside the window it looks at).
    a_age_in_range: assert (!busy || (age >= 8'd1 && age <= DEPTH));
    if (due) begin
      if (RESET != 0 && reset_met) begin
        a_reset_clears: assert (q == {WIDTH{1'b0}});
      end else begin
        a_delayed_by_depth: assert (q == word);
      end
    end
  end

  always @(*) begin
    c_word_delivered: cover (due && !reset_met && q != {WIDTH{1'b0}});
    c_reset_on_the_way: cover (due && reset_met && !rst);
  end

endmodule
`default_nettype wire
