`default_nettype none
// tt_writeback: the last stage shared by the contraction engine and the element-wise unit (SPEC 2.3, 5.1).
//
// Per requantised element: clamp to the op's output width out_w (<= OUT_W), optionally add the old word and
// saturate again (the saturating accumulate of gradient buffers), register the write, count saturations
// (32-bit, saturating; an element that clamps twice counts twice, as in the golden model) and track max |y|.
// clear restarts the statistics for a new op. Latency: one cycle from in_valid to wr_en, two to the statistics
// (|y| and the saturation increment are registered first, keeping the max compare off the requantiser's path;
// the units raise done a cycle after the last write, when the statistics are complete).
module tt_writeback #(
  parameter integer ADDR_W = 20,  // element address width
  parameter integer OUT_W  = 16   // widest output word, 2..32
) (
  input  wire              clk,
  input  wire              rst,
  input  wire              clear,       // a new op starts: zero sat_count and maxabs
  input  wire              in_valid,    // a requantised element arrives
  input  wire              in_fin,      // ... and it is the op's last
  input  wire [ADDR_W-1:0] in_addr,
  input  wire [OUT_W-1:0]  rq_y,        // from tt_requant (saturated to OUT_W)
  input  wire              rq_sat,
  input  wire [OUT_W-1:0]  old,         // the destination's old word (used when accumulate)
  input  wire              accumulate,
  input  wire [5:0]        out_w,       // this op's output width, 2..OUT_W (checked by the unit at start)
  output wire              wr_en,
  output wire [ADDR_W-1:0] wr_addr,
  output wire [OUT_W-1:0]  wr_data,
  output wire              fin,         // the last element's write is on the port this cycle
  output wire [31:0]       sat_count,
  output wire [OUT_W-1:0]  maxabs
);

  localparam integer WB_W = OUT_W + 2;  // holds old + y of two OUT_W-bit words, and the limits

  generate
    if (OUT_W < 2 || OUT_W > 32) begin : g_bad_out_w
      error_tt_writeback_OUT_W_must_be_2_to_32 u_error ();
    end
  endgenerate

  reg              wr_en_q;
  reg              fin_q;
  reg [ADDR_W-1:0] wr_addr_q;
  reg [OUT_W-1:0]  wr_data_q;
  reg [31:0]       sat_cnt_q;
  reg [OUT_W-1:0]  maxabs_q;
  wire signed [WB_W-1:0] one    = {{(WB_W-1){1'b0}}, 1'b1};
  wire signed [WB_W-1:0] lim_hi = (one <<< (out_w - 6'd1)) - one;
  wire signed [WB_W-1:0] lim_lo = -(one <<< (out_w - 6'd1));
  wire signed [WB_W-1:0] y_rq   = {{2{rq_y[OUT_W-1]}}, rq_y};
  wire                   hi1    = y_rq > lim_hi;
  wire                   lo1    = y_rq < lim_lo;
  wire signed [WB_W-1:0] y1     = hi1 ? lim_hi : (lo1 ? lim_lo : y_rq);
  wire                   sat1   = rq_sat || hi1 || lo1;  // one RQ saturation, whichever range clamped
  wire signed [WB_W-1:0] old_x  = {{2{old[OUT_W-1]}}, old};
  wire signed [WB_W-1:0] sum    = old_x + y1;
  wire                   hi2    = sum > lim_hi;
  wire                   lo2    = sum < lim_lo;
  wire signed [WB_W-1:0] y2     = hi2 ? lim_hi : (lo2 ? lim_lo : sum);
  wire                   sat2   = accumulate && (hi2 || lo2);
  wire signed [WB_W-1:0] word   = accumulate ? y2 : y1;
  wire [WB_W-1:0]        absw   = word[WB_W-1] ? -word : word;  // <= 2^(OUT_W-1): fits OUT_W bits
  wire [1:0]             sat_inc = {1'b0, sat1} + {1'b0, sat2};
  wire [1:0]             unused_absw_top = absw[WB_W-1:OUT_W];

  // The statistics stage: the element's |y| and saturation increment, one cycle behind the write.
  reg              st_valid_q;
  reg [OUT_W-1:0]  st_abs_q;
  reg [1:0]        st_sat_q;
  wire [32:0]      sat_sum = {1'b0, sat_cnt_q} + {31'd0, st_sat_q};

  always @(posedge clk) begin
    if (rst) begin
      wr_en_q <= 1'b0;
      fin_q   <= 1'b0;
    end else begin
      wr_en_q <= in_valid;
      fin_q   <= in_valid && in_fin;
    end
    wr_addr_q <= in_addr;
    wr_data_q <= word[OUT_W-1:0];
    st_abs_q  <= absw[OUT_W-1:0];
    st_sat_q  <= sat_inc;
  end

  always @(posedge clk) begin
    if (rst || clear) begin
      st_valid_q <= 1'b0;
      sat_cnt_q <= 32'd0;
      maxabs_q  <= {OUT_W{1'b0}};
    end else begin
      st_valid_q <= in_valid;
      if (st_valid_q) begin
        sat_cnt_q <= sat_sum[32] ? 32'hFFFF_FFFF : sat_sum[31:0];
        if (st_abs_q > maxabs_q) begin
          maxabs_q <= st_abs_q;
        end
      end
    end
  end

  assign wr_en     = wr_en_q;
  assign wr_addr   = wr_addr_q;
  assign wr_data   = wr_data_q;
  assign fin       = fin_q;
  assign sat_count = sat_cnt_q;
  assign maxabs    = maxabs_q;

endmodule
`default_nettype wire
